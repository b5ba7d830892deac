"""The long-poll's waiter (``api/review_wait.py``) on a loop the group sender (``group_sender.py``) hands messages
to, as Daphne's in ``serve``: woken by the queue's live messages, following an escalated item to
its new queue's group, answering from the database."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from reviewconsole import group_sender
from reviewconsole.api.models import ApiClient
from reviewconsole.api.review_wait import review_wait
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.expiry import interrupt_expire
from reviewconsole.inbox.live import messages
from reviewconsole.inbox.models import Item, Queue
from tests.api.conftest import make_api_client

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 20.0  # seconds after which the test gives up on the waiter (its own wait is longer)


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


async def _members(queue_slug: str) -> None:
    """Until the waiter has joined the queue's group (the in-memory layer's own table)."""
    queue_id = (await Queue.objects.aget(slug=queue_slug)).pk
    layer = get_channel_layer()
    while not layer.groups.get(messages.group_name(queue_id)):
        await asyncio.sleep(0.01)


async def test_the_waiter_follows_an_escalated_item_and_wakes_on_its_decision(demo_tx, bound_loop):
    _, token = await sync_to_async(make_api_client)()
    client = await ApiClient.objects.aget(name="partner")
    body = await sync_to_async(_ask)(token, due_in_seconds=60, on_expiry="escalate")
    item = await Item.objects.aget(session_id=body["session_id"])
    waiter = asyncio.create_task(review_wait(client, body["id"], 50, ""))
    await asyncio.wait_for(_members("finance"), LIMIT)
    later = timezone.now() + dt.timedelta(seconds=61)
    assert await sync_to_async(interrupt_expire)(pk=item.pk, now=later) == "escalated"
    await asyncio.wait_for(_members("triage"), LIMIT)  # it heard of the move and joined the new queue
    assert not waiter.done()
    manager = await get_user_model().objects.aget(username="manager")

    def decide():
        row = Item.objects.select_related("session", "queue").get(pk=item.pk)
        interrupt_decide(interrupt=row, user=manager, action="approve")

    await sync_to_async(decide)()
    answer = await asyncio.wait_for(waiter, LIMIT)
    assert answer["status"] == "decided"
    assert (answer["decision"]["action"], answer["decision"]["by"]) == ("approve", "manager")
