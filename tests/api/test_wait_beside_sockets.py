"""The review long-poll (``api/review_wait.py``) joins a queue's group with a
channel of its own, beside the process's one reader of the queue (``inbox/live/hub.py``): a
decision wakes the waiter and reaches the queue's sockets."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from reviewconsole.api.models import ApiClient
from reviewconsole.api.review_wait import review_settled
from reviewconsole.inbox.models import Item
from tests.api.conftest import make_api_client
from tests.api.test_review_wait import LIMIT, _ask, _decide, _members, bound_loop  # noqa: F401
from tests.inbox.test_consumers import TIMEOUT, _watching, connect, cookies  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_long_poll_and_a_socket_of_the_same_queue_both_hear_a_decision(bound_loop, cookies, connect):  # noqa: F811
    _, token = await sync_to_async(make_api_client)()
    client = await ApiClient.objects.aget(name="partner")
    socket = await _watching(connect, cookies["manager"])
    body = await sync_to_async(_ask)(token)
    created = await socket.receive_json_from(timeout=TIMEOUT)
    assert created["event"] == "interrupt.created"
    waiter = asyncio.create_task(review_settled(client, body["id"], 50, ""))
    await asyncio.wait_for(_members("finance", 2), LIMIT)  # the reader and the waiter
    item = await Item.objects.aget(session_id=body["session_id"])

    await _decide(item.pk)

    answer = json.loads(await asyncio.wait_for(waiter, LIMIT))
    assert answer["status"] != "pending"
    resolved = await socket.receive_json_from(timeout=TIMEOUT)
    assert (resolved["event"], resolved["item"]["id"]) == ("interrupt.resolved", item.pk)
