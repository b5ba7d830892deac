"""Live updates: tell each queue's Channels group when its items appear or leave.

Messages (``type: "inbox.message"``) carry ``event`` (``interrupt.created`` /
``interrupt.resolved``) and a summary of the item. The websocket consumer forwards them to
reviewers of that queue only.

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

from .models import Interrupt

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["bind_loop", "group_name", "interrupts_changed", "publish", "summary"]

_main_loop: asyncio.AbstractEventLoop | None = None


def bind_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Send channel-layer messages on ``loop`` (Daphne's) from every thread."""
    global _main_loop
    _main_loop = loop


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


def summary(row: Interrupt) -> dict[str, Any]:
    """What a reviewer's list shows of an item (rendered with textContent, never as HTML)."""
    return {
        "id": row.pk,
        "interrupt_id": row.interrupt_id,
        "session_id": row.session_id,
        "workflow": row.session.workflow,
        "title": row.session.title,
        "queue": row.queue.slug,
        "queue_name": row.queue.name,
        "kind": row.kind,
        "status": row.status,
        "message": row.message[:300],
        "created_at": row.created_at.isoformat(),
        "decided_by": row.decided_by_label,
        "decided_at": row.decided_at.isoformat() if row.decided_at else None,
        "url": f"/inbox/items/{row.pk}/",
    }


def interrupts_changed(*, created: list[int], resolved: list[int]) -> None:
    """Publish ``interrupt.created`` / ``interrupt.resolved`` for these interrupt rows."""
    ids = [*created, *resolved]
    if not ids:
        return
    rows = Interrupt.objects.select_related("queue", "session").filter(pk__in=ids)
    for row in rows:
        event = "interrupt.created" if row.pk in created and row.status == "pending" else "interrupt.resolved"
        try:
            publish(group_name(row.queue_id), {"type": "inbox.message", "event": event, "item": summary(row)})
        except Exception:  # a lost live message is caught up on reconnect; never fail the commit for it
            logger.exception("Could not publish %s for interrupt %s", event, row.pk)
