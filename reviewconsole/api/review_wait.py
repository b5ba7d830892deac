"""``GET /api/v1/reviews/{id}?wait=N``: the long-poll, held on the event loop, not on a thread.

The waiter joins the Channels group of the review's queue (``inbox.live.messages.group_name``:
every change to the queue's items is published there after commit through ``group_sender``), then
reads the review, so a decision committed in between is either read or heard. It wakes on a
message about its session's item (created, claimed, resolved, cancelled, escalated…), reads the
review again, follows the item to another queue's group when it moved (escalation, reassignment),
and answers once the review is no longer ``pending`` or ``N`` seconds have passed, reading the
database one last time: the stored review is the answer, the message only a wake-up (messages are
at most once). No thread is held while it waits: only the reads run on Django's sync thread
(``sync_to_async``).

Under Daphne with the in-memory layer the group sender hands messages to Daphne's loop, where these
waiters run (``group_sender.bind_loop``); with Redis any web process's waiter hears any
process's decision.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from ..inbox.live.messages import group_name
from ..inbox.models import Item, Queue
from .models import ApiClient
from .reviews import review_for, review_json

__all__ = ["MAX_WAIT", "review_wait"]

MAX_WAIT = 60.0
"""Longest ``wait`` in seconds."""


def _read(client: ApiClient, review_id: str, base_url: str) -> tuple[dict[str, Any], set[int]]:
    """The review's JSON and the queues whose groups tell of its item (404 ``review_unknown``)."""
    review = review_for(client, review_id)
    body = review_json(review, base_url)
    queues = set(Item.objects.filter(session_id=review.session_id).values_list("queue_id", flat=True))
    if not queues:  # not asked yet: it will be, in the review's queue
        queues = set(Queue.objects.filter(slug=review.queue).values_list("pk", flat=True))
    return body, queues


def _about(message: dict[str, Any], session_id: str) -> bool:
    item = message.get("item")
    return isinstance(item, dict) and item.get("session_id") == session_id


async def _heard(layer: Any, channel: str, session_id: str, deadline: float) -> bool:
    """Wait for a message about ``session_id``'s item: True when one came, False at ``deadline``."""
    loop = asyncio.get_running_loop()
    while (left := deadline - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(layer.receive(channel), timeout=left)
        except TimeoutError:
            return False
        if _about(message, session_id):
            return True
    return False


async def review_wait(client: ApiClient, review_id: str, seconds: float, base_url: str) -> dict[str, Any]:
    """The review's JSON once it is not ``pending`` or after ``seconds`` (0 to :data:`MAX_WAIT`).

    Raises:
        ApiError: 404 ``review_unknown``.
    """
    read = sync_to_async(_read)
    body, queues = await read(client, review_id, base_url)
    layer = get_channel_layer()
    if body["status"] != "pending" or seconds <= 0 or layer is None:
        return body
    loop = asyncio.get_running_loop()
    deadline = loop.time() + min(seconds, MAX_WAIT)
    channel = await layer.new_channel("review.")
    joined: set[int] = set()
    try:
        while True:
            for queue_id in queues - joined:
                await layer.group_add(group_name(queue_id), channel)
            joined |= queues
            body, queues = await read(client, review_id, base_url)
            if body["status"] != "pending":
                return body
            if not queues <= joined:
                continue  # the item moved: join its new queue's group before waiting
            if not await _heard(layer, channel, body["session_id"], deadline):
                return (await read(client, review_id, base_url))[0]
    finally:
        for queue_id in joined:
            with contextlib.suppress(Exception):
                await layer.group_discard(group_name(queue_id), channel)
