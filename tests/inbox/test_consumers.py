"""The inbox websocket, through the real ASGI stack: session cookie → AuthMiddlewareStack → consumer.

A new interrupt reaches the members of its queue and nobody else; a decision removes it live; an
open socket stops hearing of a queue once its user's access ends (logout, deactivation, removal).
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from reviewconsole.asgi import application
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.live import hub
from reviewconsole.inbox.models import Item, Queue
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


@contextlib.asynccontextmanager
async def opened_sockets():
    """A function opening ``/ws/inbox/`` with a cookie; every socket it opened is closed
    afterwards, past one that a failed test left broken."""
    opened = []

    async def open_socket(cookie=None):
        headers = [(b"origin", b"http://testserver")]
        if cookie:
            headers.append((b"cookie", cookie.encode()))
        communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
        opened.append(communicator)
        return communicator, await communicator.connect(timeout=TIMEOUT)

    try:
        yield open_socket
    finally:
        for communicator in opened:
            with contextlib.suppress(BaseException):
                await communicator.disconnect()


@pytest.fixture
async def connect():
    """Open ``/ws/inbox/`` with a cookie (:func:`opened_sockets`); the layer flushed afterwards."""
    async with opened_sockets() as open_socket:
        yield open_socket
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
    interrupt = await database_sync_to_async(Item.objects.get)(session=session)
    assert message["event"] == "interrupt.created"
    assert message["item"]["id"] == interrupt.pk
    assert message["item"]["session_id"] == session.id
    assert (message["item"]["queue"], message["item"]["status"]) == ("support", "pending")
    assert message["item"]["url"] == f"/inbox/items/{interrupt.pk}/"
    assert message["item"]["title"] == COMPLAINT
    assert message["row"].startswith(f'<tr data-id="{interrupt.pk}"')  # shown at once by the list
    assert await _is_quiet(outsider)


async def test_a_decision_removes_the_item_and_brings_the_next(cookies, connect):
    member, (ok, _) = await connect(cookies["manager"])
    assert ok
    await member.receive_json_from(timeout=TIMEOUT)  # hello
    session = await _start_review()
    created = await member.receive_json_from(timeout=TIMEOUT)

    def decide():
        from django.contrib.auth.models import User

        interrupt = Item.objects.get(pk=created["item"]["id"])
        manager = User.objects.get(username="manager")
        interrupt_decide(interrupt=interrupt, user=manager, action="revise", text="shorter")
        return Item.objects.get(session=session, status="pending")

    second = await database_sync_to_async(decide)()

    resolved = await member.receive_json_from(timeout=TIMEOUT)
    assert (resolved["event"], resolved["item"]["id"]) == ("interrupt.resolved", created["item"]["id"])
    assert (resolved["item"]["status"], resolved["item"]["decided_by"]) == ("resolved", "manager")
    again = await member.receive_json_from(timeout=TIMEOUT)
    assert (again["event"], again["item"]["id"]) == ("interrupt.created", second.pk)
    assert again["item"]["snippet"] == f"Customer wrote: {COMPLAINT}"  # the line under the page's title
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


# -- access that ends while the socket is open ---------------------------------------------------


@pytest.fixture
def recheck_every_message(settings):
    """Check access again before every message (the default trusts a check for 2 s)."""
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "ACCESS_RECHECK_SECONDS": 0}


def _login(also=()):
    """The ``reviewer`` persona (``support``; also the groups ``also``) and a logged-in client:
    its cookie opens the socket, its ``logout()`` ends the session."""
    from django.contrib.auth.models import Group

    from tests.personas import persona_user

    user = persona_user("reviewer")
    user.groups.add(*Group.objects.filter(name__in=also))
    client = Client()
    client.force_login(user)
    return user, client, f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


async def _watching(connect, cookie):
    socket, (ok, _) = await connect(cookie)
    assert ok
    assert (await socket.receive_json_from(timeout=TIMEOUT))["event"] == "hello"
    return socket


def _logout(user, client):
    client.logout()


def _deactivate(user, client):
    user.is_active = False
    user.save(update_fields=["is_active"])


def _change_password(user, client):
    user.set_password("a-new-password-4321")
    user.save()


@pytest.mark.parametrize("revoke", [_logout, _deactivate, _change_password])
async def test_a_socket_whose_login_ended_is_closed_4401_and_hears_nothing(
    demo_tx, connect, recheck_every_message, revoke
):
    user, client, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    await database_sync_to_async(revoke)(user, client)

    await _start_review()

    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}
    assert await socket.receive_nothing()
    layer = get_channel_layer()
    support = await database_sync_to_async(Queue.objects.get)(slug="support")
    assert not layer.groups.get(f"queue.{support.pk}")  # left the group, not just silent


async def test_logging_out_closes_the_sessions_sockets_at_once(demo_tx, connect):
    """No waiting for the next access check (trusted for 2 s by default): the logout tells the
    session's sockets, and only that session's."""
    _, client, cookie = await database_sync_to_async(_login)()
    _, _, other_cookie = await database_sync_to_async(_login)()  # the same reviewer on another device
    socket = await _watching(connect, cookie)
    other = await _watching(connect, other_cookie)
    await database_sync_to_async(client.logout)()
    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}
    session = await _start_review()
    message = await other.receive_json_from(timeout=TIMEOUT)
    assert (message["event"], message["item"]["session_id"]) == ("interrupt.created", session.id)


async def test_a_ping_after_logout_closes_an_idle_socket(demo_tx, connect, recheck_every_message):
    _, client, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    await database_sync_to_async(client.logout)()
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}


async def test_a_reviewer_removed_from_a_queue_stops_hearing_of_it(cookies, connect, recheck_every_message):
    """Still a member of ``finance``: the socket stays open and leaves ``support`` only."""
    from django.contrib.auth.models import Group

    user, _, cookie = await database_sync_to_async(_login)(also=["queue:finance"])
    socket = await _watching(connect, cookie)
    witness = await _watching(connect, cookies["manager"])
    support = await database_sync_to_async(Group.objects.get)(name="queue:support")
    await database_sync_to_async(user.groups.remove)(support)

    session = await _start_review()

    created = await witness.receive_json_from(timeout=TIMEOUT)  # the message was sent
    assert (created["event"], created["item"]["session_id"]) == ("interrupt.created", session.id)
    assert await _is_quiet(socket)  # and did not reach the socket before the pong
    support_queue = await database_sync_to_async(Queue.objects.get)(slug="support")
    assert hub.members(support_queue.pk) == 1  # the witness only


async def test_a_reviewer_left_with_no_queue_is_closed_4403(demo_tx, connect, recheck_every_message):
    from django.contrib.auth.models import Group

    user, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    support = await database_sync_to_async(Group.objects.get)(name="queue:support")
    await database_sync_to_async(user.groups.remove)(support)

    await _start_review()

    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4403}


async def test_a_user_who_never_had_a_queue_keeps_an_idle_socket(demo_tx, connect, recheck_every_message):
    from django.contrib.auth.models import User

    def auditor_cookie():
        client = Client()
        client.force_login(User.objects.get(username="auditor"))
        return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"

    socket, (ok, _) = await connect(await database_sync_to_async(auditor_cookie)())
    assert ok
    assert (await socket.receive_json_from(timeout=TIMEOUT))["queues"] == 0
    await socket.send_json_to({"type": "ping"})
    assert (await socket.receive_json_from(timeout=TIMEOUT))["event"] == "pong"


async def test_a_member_whose_access_holds_still_hears(demo_tx, connect, recheck_every_message):
    """The check itself drops nothing for a user still logged in and in the queue."""
    _, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    session = await _start_review()
    message = await socket.receive_json_from(timeout=TIMEOUT)
    assert (message["event"], message["item"]["session_id"]) == ("interrupt.created", session.id)


async def test_a_frame_that_is_not_json_is_ignored_and_the_socket_stays_open(cookies, connect):
    member, (ok, _) = await connect(cookies["manager"])
    assert ok
    assert (await member.receive_json_from(timeout=TIMEOUT))["event"] == "hello"
    await member.send_to(text_data="not json")
    assert await _is_quiet(member)


async def test_the_access_checks_of_many_sockets_run_in_one_batch(demo_tx, connect, recheck_every_message, monkeypatch):
    """Each socket is checked again (its own login), but one thread-pool job checks them all:
    a thousand sockets do not queue a thousand jobs behind the pool (``live/access.py``)."""
    from reviewconsole.inbox.live import access

    batches = []
    check_all = access._check_all

    def recording(logins):
        batches.append(len(logins))
        if len(batches) == 1:  # hold the first job until the other sockets have asked, at any pace
            deadline = time.monotonic() + TIMEOUT
            while len(logins) + _asking() < 4 and time.monotonic() < deadline:
                threading.Event().wait(0.005)
        return check_all(logins)

    def _asking():
        return sum(len(batch.waiting) for batch in list(access._batches.values()))

    monkeypatch.setattr(access, "_check_all", recording)
    sockets = []
    for _ in range(4):
        _, _, cookie = await database_sync_to_async(_login)()  # a login (a session) of its own each
        sockets.append(await _watching(connect, cookie))
    batches.clear()

    session = await _start_review()

    for socket in sockets:
        message = await socket.receive_json_from(timeout=TIMEOUT)
        assert (message["event"], message["item"]["session_id"]) == ("interrupt.created", session.id)
    assert sum(batches) == 4  # every socket checked
    assert len(batches) <= 2, batches  # the ones asked while a job ran all wait for the next one
