"""The long-poll's wait (``api/review_wait.py``) on a loop the group sender (``group_sender.py``) hands
messages to, as Daphne's in ``serve``: woken by the queue's live messages, following an escalated
item to its new queue's group; and the ASGI application (``asgi.py``, ``api/review_poll.py``)
holding many long-polls without a thread each, then answering them from the database."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import threading

import httpx
import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from reviewconsole import group_sender
from reviewconsole.api.models import ApiClient
from reviewconsole.api.review_wait import review_settled
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.expiry import interrupt_expire
from reviewconsole.inbox.live import messages
from reviewconsole.inbox.models import Item, Queue
from tests.api.conftest import make_api_client

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 20.0  # seconds after which the test gives up on the waiter (its own wait is longer)
WAITERS = 60  # long-polls held at once
POOL = min(32, (os.cpu_count() or 1) + 4)  # the loop's default thread pool (its reads), at most


@pytest.fixture
async def bound_loop():
    """Live messages handed to this test's loop, as ``serve`` hands them to Daphne's."""
    group_sender.bind_loop(asyncio.get_running_loop())
    yield
    await asyncio.to_thread(group_sender.drain)
    group_sender.bind_loop(None)


def _ask(token: str, **changes):
    body = {"title": "Refund", "message": "Approve?", "queue": "finance", **changes}
    headers = {"Authorization": f"Bearer {token}"}
    response = Client().post("/api/v1/reviews", json.dumps(body), content_type="application/json", headers=headers)
    assert response.status_code == 201, response.content
    return response.json()


async def _members(queue_slug: str, count: int = 1) -> None:
    """Until ``count`` waiters have joined the queue's group (the in-memory layer's own table)."""
    queue_id = (await Queue.objects.aget(slug=queue_slug)).pk
    layer = get_channel_layer()
    while len(layer.groups.get(messages.group_name(queue_id), ())) < count:
        await asyncio.sleep(0.01)


async def _decide(item_pk: int) -> None:
    manager = await get_user_model().objects.aget(username="manager")

    def decide():
        row = Item.objects.select_related("session", "queue").get(pk=item_pk)
        interrupt_decide(interrupt=row, user=manager, action="approve")

    await sync_to_async(decide)()


async def test_the_waiter_follows_an_escalated_item_and_wakes_on_its_decision(demo_tx, bound_loop):
    _, token = await sync_to_async(make_api_client)()
    client = await ApiClient.objects.aget(name="partner")
    body = await sync_to_async(_ask)(token, due_in_seconds=60, on_expiry="escalate")
    item = await Item.objects.aget(session_id=body["session_id"])
    waiter = asyncio.create_task(review_settled(client, body["id"], 50, ""))
    await asyncio.wait_for(_members("finance"), LIMIT)
    later = timezone.now() + dt.timedelta(seconds=61)
    assert await sync_to_async(interrupt_expire)(pk=item.pk, now=later) == "escalated"
    await asyncio.wait_for(_members("triage"), LIMIT)  # it heard of the move and joined the new queue
    assert not waiter.done()
    await _decide(item.pk)
    answer = json.loads(await asyncio.wait_for(waiter, LIMIT))
    assert (answer["status"], answer["decision"]["by"]) == ("decided", "manager")


async def test_long_polls_through_the_asgi_application_hold_no_thread_each(demo_tx, bound_loop):
    # Served by Django alone each held request kept a thread of its own (its ThreadSensitiveContext,
    # blocked under the sync middleware): WAITERS long-polls were WAITERS more threads.
    assert WAITERS > 2 * (POOL + 1)
    from reviewconsole.asgi import application

    _, token = await sync_to_async(make_api_client)()
    body = await sync_to_async(_ask)(token)
    item = await Item.objects.aget(session_id=body["session_id"])
    headers = {"Authorization": f"Bearer {token}"}
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=LIMIT * 2) as http:
        before = threading.active_count()
        path = f"/api/v1/reviews/{body['id']}"
        polls = [asyncio.create_task(http.get(path, params={"wait": 50}, headers=headers)) for _ in range(WAITERS)]
        await asyncio.wait_for(_members("finance", WAITERS), LIMIT)  # every one of them is waiting
        held = threading.active_count() - before
        assert not any(poll.done() for poll in polls)
        await _decide(item.pk)
        answers = await asyncio.wait_for(asyncio.gather(*polls), LIMIT)
        elapsed = await http.get(path, params={"wait": 0.05}, headers=headers)  # decided: at once
    assert held <= POOL + 1, f"{held} threads for {WAITERS} waiters"  # bounded by the pool, not one each
    assert {a.status_code for a in answers} == {200}
    assert {(a.json()["status"], a.json()["decision"]["action"]) for a in answers} == {("decided", "approve")}
    assert elapsed.json()["status"] == "decided"
    assert answers[0].json() == elapsed.json()  # the held answer is the read's own
    assert answers[0].headers["x-content-type-options"] == "nosniff"  # with Django's headers


async def test_the_asgi_application_leaves_what_it_cannot_hold_to_django(demo_tx, bound_loop):
    from reviewconsole.asgi import application

    _, token = await sync_to_async(make_api_client)()
    body = await sync_to_async(_ask)(token)
    path = f"/api/v1/reviews/{body['id']}"
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=LIMIT) as http:
        stranger = await http.get(path, params={"wait": 30}, headers={"Authorization": "Bearer rc_nobody"})
        unknown = await http.get(
            "/api/v1/reviews/rv_nope", params={"wait": 30}, headers={"Authorization": f"Bearer {token}"}
        )
        too_long = await http.get(path, params={"wait": 61}, headers={"Authorization": f"Bearer {token}"})
        elapsed = await http.get(path, params={"wait": 0.05}, headers={"Authorization": f"Bearer {token}"})
    assert (stranger.status_code, stranger.json()["error"]["code"]) == (401, "unauthorized")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "review_unknown")
    assert (too_long.status_code, too_long.json()["error"]["code"]) == (400, "wait_invalid")
    assert (elapsed.status_code, elapsed.json()["status"]) == (200, "pending")


async def test_a_long_poll_whose_client_hangs_up_ends_and_leaves_its_group(demo_tx, bound_loop):
    from reviewconsole.asgi import application

    _, token = await sync_to_async(make_api_client)()
    body = await sync_to_async(_ask)(token)
    received = asyncio.Queue()  # the client's side, as Daphne hands it over
    received.put_nowait({"type": "http.request", "body": b"", "more_body": False})

    sent = []

    async def send(message):
        sent.append(message)

    path = f"/api/v1/reviews/{body['id']}"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"wait=50",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    served = asyncio.create_task(application(scope, received.get, send))
    await asyncio.wait_for(_members("finance"), LIMIT)
    received.put_nowait({"type": "http.disconnect"})
    await asyncio.wait_for(served, LIMIT)
    assert sent == []  # nobody to answer
    finance = await Queue.objects.aget(slug="finance")
    assert not get_channel_layer().groups.get(messages.group_name(finance.pk))
