"""The inbox websocket, through the real ASGI stack: session cookie → AuthMiddlewareStack → consumer.

A new interrupt reaches the members of its queue and nobody else; a decision removes it live.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from reviewconsole.asgi import application
from reviewconsole.inbox.models import Interrupt, Queue
from reviewconsole.inbox.services import interrupt_decide
from reviewconsole.workflow_sessions.services import session_start
from tests.conftest import COMPLAINT, make_outsider

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5  # seconds to wait for a message that must come


def _cookie_for(user):
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.fixture
def cookies(demo_tx):
    from django.contrib.auth.models import User

    return {"manager": _cookie_for(User.objects.get(username="manager")), "outsider": _cookie_for(make_outsider())}


@pytest.fixture
async def connect():
    """Open ``/ws/inbox/`` with a cookie; every socket is closed and the layer flushed afterwards."""
    opened = []

    async def open_socket(cookie=None):
        headers = [(b"origin", b"http://testserver")]
        if cookie:
            headers.append((b"cookie", cookie.encode()))
        communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
        opened.append(communicator)
        return communicator, await communicator.connect(timeout=TIMEOUT)

    yield open_socket
    for communicator in opened:
        await communicator.disconnect()
    await get_channel_layer().flush()


async def _start_review():
    return await database_sync_to_async(session_start)(
        workflow="email-review", data={"complaint": COMPLAINT}, user_id="test"
    )


async def _is_quiet(communicator):
    """True if nothing arrived before the answer to a ping (messages are delivered in order)."""
    await communicator.send_json_to({"type": "ping"})
    return (await communicator.receive_json_from(timeout=TIMEOUT))["event"] == "pong"


async def test_a_new_interrupt_reaches_a_member_and_not_an_outsider(cookies, connect):
    member, (ok, _) = await connect(cookies["manager"])
    assert ok
    hello = await member.receive_json_from(timeout=TIMEOUT)
    every_queue = await database_sync_to_async(Queue.objects.count)()
    assert (hello["event"], hello["queues"], len(hello["versions"])) == ("hello", every_queue, every_queue)
    outsider, (ok, _) = await connect(cookies["outsider"])
    assert ok
    hello = await outsider.receive_json_from(timeout=TIMEOUT)
    assert (hello["event"], hello["queues"], list(hello["versions"].values())) == ("hello", 1, [0])

    session = await _start_review()

    message = await member.receive_json_from(timeout=TIMEOUT)
    interrupt = await database_sync_to_async(Interrupt.objects.get)(session=session)
    assert message["event"] == "interrupt.created"
    assert message["item"]["id"] == interrupt.pk
    assert message["item"]["session_id"] == session.id
    assert (message["item"]["queue"], message["item"]["status"]) == ("support", "pending")
    assert message["item"]["url"] == f"/inbox/items/{interrupt.pk}/"
    assert message["item"]["title"] == COMPLAINT
    assert await _is_quiet(outsider)


async def test_a_decision_removes_the_item_and_brings_the_next(cookies, connect):
    member, (ok, _) = await connect(cookies["manager"])
    assert ok
    await member.receive_json_from(timeout=TIMEOUT)  # hello
    session = await _start_review()
    created = await member.receive_json_from(timeout=TIMEOUT)

    def decide():
        from django.contrib.auth.models import User

        interrupt = Interrupt.objects.get(pk=created["item"]["id"])
        manager = User.objects.get(username="manager")
        interrupt_decide(interrupt=interrupt, user=manager, action="revise", text="shorter")
        return Interrupt.objects.get(session=session, status="pending")

    second = await database_sync_to_async(decide)()

    resolved = await member.receive_json_from(timeout=TIMEOUT)
    assert (resolved["event"], resolved["item"]["id"]) == ("interrupt.resolved", created["item"]["id"])
    assert (resolved["item"]["status"], resolved["item"]["decided_by"]) == ("resolved", "manager")
    again = await member.receive_json_from(timeout=TIMEOUT)
    assert (again["event"], again["item"]["id"]) == ("interrupt.created", second.pk)
    assert again["item"]["message"] == f"Subject: About your message: {COMPLAINT}"  # the draft's first line
    assert again["version"] == resolved["version"] + 1 and again["queue"] == resolved["queue"]


async def test_an_anonymous_socket_is_refused(demo_tx, connect):
    _, (ok, code) = await connect()
    assert (ok, code) == (False, 4401)


async def test_a_forged_session_cookie_is_refused(demo_tx, connect):
    _, (ok, code) = await connect(f"{settings.SESSION_COOKIE_NAME}=not-a-session")
    assert (ok, code) == (False, 4401)


async def test_a_pong_carries_the_queue_versions_so_an_idle_page_notices_a_lost_message(cookies, connect):
    member, (ok, _) = await connect(cookies["manager"])
    assert ok
    hello = await member.receive_json_from(timeout=TIMEOUT)
    await _start_review()
    created = await member.receive_json_from(timeout=TIMEOUT)
    await member.send_json_to({"type": "ping"})
    pong = await member.receive_json_from(timeout=TIMEOUT)
    queue = str(created["queue"])
    assert pong["event"] == "pong"
    assert pong["versions"][queue] == created["version"] > hello["versions"][queue]
