"""Live updates: tell each queue's Channels group what changed, with the queue's version.

A group message (``type: "inbox.message"``) carries ``event`` (``interrupt.created``,
``interrupt.claimed``, ``interrupt.unclaimed``, ``interrupt.resolved``, ``interrupt.cancelled``,
``interrupt.expired``, ``interrupt.escalated``), ``queue`` (its id), ``version`` (the queue's
version after this change, see ``changes.py``) and ``item``, the item's summary as it is when
the message is sent (``serializers.list_entry``). The websocket consumer forwards them to reviewers of that queue only.

With the in-memory channel layer (the embedded default) the layer lives on Daphne's event loop;
runs happen on worker threads with loops of their own, so messages are handed to Daphne's loop
(:func:`bind_loop`) instead of being sent from the worker's loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from ..items.serializers import list_entry
from ..models import QueueChange
from . import publisher

logger = logging.getLogger("reviewconsole.inbox")

__all__ = [
    "bind_loop",
    "change_message",
    "group_name",
    "publish",
    "publish_changes",
]

_main_loop: asyncio.AbstractEventLoop | None = None


def bind_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Send channel-layer messages on ``loop`` (Daphne's) from every thread."""
    global _main_loop
    _main_loop = loop
    publisher.bound_loop(loop)


def group_name(queue_id: int) -> str:
    """The Channels group of a queue."""
    return f"queue.{queue_id}"


def publish(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` from any thread or loop."""
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _main_loop
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(layer.group_send(group, message))
        else:
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(timeout=5)
        return
    async_to_sync(layer.group_send)(group, message)


def change_message(change: QueueChange) -> dict[str, Any]:
    """A change as clients receive it (socket and catch-up alike)."""
    return {
        "event": change.event,
        "queue": change.queue_id,
        "version": change.version,
        "item": list_entry(change.item) if change.item is not None else None,
    }


def publish_changes(change_ids: list[int]) -> None:
    """Publish these committed changes to their queues' groups, in version order, off the
    committing thread (``publisher.py``). Never raises."""
    publisher.submit(lambda: _publish_changes(change_ids))


def _publish_changes(change_ids: list[int]) -> None:
    rows = (
        QueueChange.objects.filter(pk__in=change_ids)
        .select_related("item__queue", "item__claimed_by")
        .order_by("queue_id", "version")
    )
    for change in rows:
        try:
            publisher.send(group_name(change.queue_id), {"type": "inbox.message", **change_message(change)})
        except Exception:  # a lost live message is caught up on reconnect; never fail the commit for it
            logger.exception("Could not publish change %s of queue %s", change.version, change.queue_id)
