"""The long-poll's wait (``GET /api/v1/reviews/{id}?wait=N``): until the review is not pending.

:func:`review_settled` joins the Channels group of the review's queue (``inbox.live.messages.group_name``:
every change to the queue's items is published there after commit through ``group_sender``), then
reads the review's status, so a decision committed in between is either read or heard. It wakes on
a message about its session's item (created, claimed, resolved, cancelled, escalated…), reads the
status again, follows the item to another queue's group when it moved (escalation, reassignment),
and returns the review's answer once it is no longer ``pending`` or ``N`` seconds have passed
(reading it one last time then): the stored review is the answer, a message only a wake-up
(messages are at most once).

The reads run on a thread (``sync_to_async``: the request's own in a Django view;
``channels.db.database_sync_to_async`` on the thread pool, connections checked before and after as
Channels' consumers do, for :class:`~.review_poll.ReviewLongPoll`, as the inbox's websocket reads
do); the waiting is on the event loop. Under Daphne the wait is held
by :class:`~.review_poll.ReviewLongPoll` outside Django (``asgi.py``), so no thread is held per
waiter; served by Django alone (``runserver``, the test client) the view waits with this same
function. Under Daphne with the in-memory layer the group sender hands messages to Daphne's loop
(``group_sender.bind_loop``); with Redis any web process's waiter hears any process's decision.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from ..inbox.live.messages import group_name
from ..inbox.models import Item, Queue
from .errors import ApiError
from .models import ApiClient
from .reviews import review_for, review_json

__all__ = ["MAX_WAIT", "review_answer", "review_settled", "wait_seconds"]

MAX_WAIT = 60.0
"""Longest ``wait`` in seconds."""

_WAIT = re.compile(r"[0-9]+(\.[0-9]+)?")
"""A ``wait`` as written: digits, with an optional decimal fraction (``5``, ``0.25``); ASCII digits
only (``[0-9]``, not ``\\d``)."""


def wait_seconds(text: str) -> float:
    """The seconds a ``?wait=`` of ``text`` asks for: plain digits with an optional decimal
    fraction, 0 to :data:`MAX_WAIT`.

    Raises:
        ApiError: 400 ``wait_invalid`` for anything else (a sign, an exponent, ``nan``, ``inf``,
            blanks, out of range), saying the allowed range.
    """
    if len(text) > 32 or _WAIT.fullmatch(text) is None or float(text) > MAX_WAIT:
        raise ApiError(
            400,
            "wait_invalid",
            f"wait must be a number of seconds from 0 to {MAX_WAIT:g}, written as digits with an optional"
            " decimal fraction (e.g. 30 or 2.5).",
        )
    return float(text)


def _read(client: ApiClient, review_id: str, base_url: str) -> tuple[bytes, str, str, set[int]]:
    """:func:`review_answer`'s answer and status, the review's session id, and the queues whose
    groups tell of its item.

    Raises:
        ApiError: 404 ``review_unknown``.
    """
    review = review_for(client, review_id)
    body = review_json(review, base_url)
    queues = set(Item.objects.filter(session_id=review.session_id).values_list("queue_id", flat=True))
    if not queues:  # not asked yet: it will be, in the review's queue
        queues = set(Queue.objects.filter(slug=review.queue).values_list("pk", flat=True))
    return json.dumps(body).encode(), str(body["status"]), review.session_id, queues


def review_answer(client: ApiClient, review_id: str, base_url: str) -> tuple[bytes, str]:
    """The read's answer: the review JSON (``ReviewOut``) as bytes, and the review's status.

    Raises:
        ApiError: 404 ``review_unknown``.
    """
    body = review_json(review_for(client, review_id), base_url)
    return json.dumps(body).encode(), str(body["status"])


def _about(message: dict[str, Any], session_id: str) -> bool:
    """Whether a queue's ``inbox.message`` (``inbox/live/messages.py``: its change as JSON ``text``,
    made once for every listener) is about an item of ``session_id``."""
    try:
        item = json.loads(message.get("text") or "{}").get("item")
    except (TypeError, ValueError, AttributeError):
        return False
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


async def review_settled(
    client: ApiClient, review_id: str, seconds: float, base_url: str, *, to_async: Any = sync_to_async
) -> bytes:
    """The read's answer (:func:`review_answer`'s bytes) once the review is not ``pending`` or
    ``seconds`` (at most :data:`MAX_WAIT`) have passed (then ``pending``); each read is the answer
    and the status at once, so a wake-up costs one. ``to_async`` runs the reads (see the module
    docstring).

    Raises:
        ApiError: 404 ``review_unknown`` (also another client's review).
    """
    read = to_async(_read)
    body, status, session_id, queues = await read(client, review_id, base_url)
    layer = get_channel_layer()
    if status != "pending" or seconds <= 0 or layer is None:
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
            body, status, session_id, queues = await read(client, review_id, base_url)
            if status != "pending":
                return body
            if not queues <= joined:
                continue  # the item moved: join its new queue's group before waiting
            if not await _heard(layer, channel, session_id, deadline):
                return (await read(client, review_id, base_url))[0]  # a message may have been lost
    finally:
        for queue_id in joined:
            with contextlib.suppress(Exception):
                await layer.group_discard(group_name(queue_id), channel)
