"""Live updates: tell each queue's Channels group what changed, with the queue's version.

A group message (``type: "inbox.message"``) carries ``event`` (``interrupt.created``,
``interrupt.claimed``, ``interrupt.unclaimed``, ``interrupt.resolved``, ``interrupt.cancelled``,
``interrupt.expired``, ``interrupt.escalated``), ``queue`` (its id), ``version`` (the queue's
version after this change, see ``changes.py``) and ``item``, the item's summary as it is when
the message is sent. The websocket consumer forwards them to reviewers of that queue only.

With the in-memory channel layer (the embedded default) the layer lives on Daphne's event loop;
runs happen on worker threads with loops of their own, so messages are handed to Daphne's loop
(:func:`bind_loop`) instead of being sent from the worker's loop.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from . import publisher
from .actions import allows_bulk_approve
from .models import SESSION_FAILED, Interrupt, InterruptStatus, QueueChange

logger = logging.getLogger("reviewconsole.inbox")

__all__ = [
    "bind_loop",
    "change_message",
    "group_name",
    "publish",
    "publish_changes",
    "snippet",
    "status_sentence",
    "summary",
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


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _utc(value: dt.datetime | None) -> str:
    return f"{value.astimezone(dt.UTC):%Y-%m-%d %H:%M:%S} UTC" if value is not None else ""


_DONE = {"approve": "approved", "reject": "rejected", "revise": "answered with feedback", "answer": "answered"}


def status_sentence(row: Interrupt, now: dt.datetime | None = None) -> str:
    """One sentence on where the item stands, e.g. "This request was approved by alice at … UTC."."""
    now = now or timezone.now()
    if row.status == InterruptStatus.CANCELLED and row.decision == SESSION_FAILED:
        return f"The session failed at {_utc(row.decided_at)}, before this request was answered."
    if row.status == InterruptStatus.CANCELLED:
        return f"This request was superseded at {_utc(row.decided_at)}: the session moved on without it."
    if row.status == InterruptStatus.RESOLVED:
        if row.decision == "timeout":
            at = _utc(row.expired_at or row.decided_at)
            return f"This request expired at {at}: the workflow went on with a timeout."
        done = _DONE.get(row.decision, "decided")
        by = f" by {row.decided_by_label}" if row.decided_by_label else ""
        return f"This request was {done}{by} at {_utc(row.decided_at)}."
    parts = []
    if row.escalated_from_id and row.expired_at:
        parts.append(f"Escalated to {row.queue.name} at {_utc(row.expired_at)}.")
    holder = row.claim_holder(now)
    if holder and row.claimed_by is not None:
        parts.append(f"Claimed by {row.claimed_by.get_username()} since {_utc(row.claimed_at)}.")
    if row.is_overdue(now):
        parts.append(f"Overdue since {_utc(row.due_at)}.")
    return " ".join(parts) or "Waiting for a decision."


def _args_text(args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    return ", ".join(f"{k}={v}" for k, v in args.items() if not isinstance(v, dict | list))[:200]


def snippet(row: Interrupt) -> str:
    """A line for the list: the message, or for tool calls the tool and its arguments."""
    payload = row.payload if isinstance(row.payload, dict) else {}
    if row.kind == "long_running" and isinstance(payload.get("args"), dict):
        return f"{row.function_name}: {_args_text(payload['args'])}"
    if row.kind == "confirmation" and isinstance(row.tool_call, dict):
        return f"Confirm {row.tool_call.get('name', 'a tool call')}: {_args_text(row.tool_call.get('args'))}"
    from .drafts import draft_of

    draft = draft_of(row)
    if draft:  # the draft's first line (its subject) says more than the review prompt
        return next((line.strip() for line in draft.splitlines() if line.strip()), "")[:300]
    return " ".join((row.message or "").split())[:300]


def summary(row: Interrupt) -> dict[str, Any]:
    """What a reviewer's list shows of an item (rendered with textContent, never as HTML)."""
    now = timezone.now()
    holder = row.claim_holder(now)
    return {
        "id": row.pk,
        "interrupt_id": row.interrupt_id,
        "session_id": row.session_id,
        "workflow": row.workflow,
        "title": row.title,
        "queue": row.queue.slug,
        "queue_id": row.queue_id,
        "queue_name": row.queue.name,
        "kind": row.kind,
        "status": row.status,
        "state": row.display_status,
        "sentence": status_sentence(row, now),
        "message": snippet(row),
        "created_at": _iso(row.created_at),
        "due_at": _iso(row.due_at),
        "overdue": row.is_overdue(now),
        "claimed_by": row.claimed_by.get_username() if holder and row.claimed_by else None,
        "claim_expires_at": _iso(row.claim_expires_at) if holder else None,
        "decision": row.decision,
        "decided_by": row.decided_by_label,
        "decided_at": _iso(row.decided_at),
        "bulk_approve": allows_bulk_approve(row),  # the interrupt's metadata, else the workflow's setting
        "url": f"/inbox/items/{row.pk}/",
    }


def change_message(change: QueueChange) -> dict[str, Any]:
    """A change as clients receive it (socket and catch-up alike)."""
    return {
        "event": change.event,
        "queue": change.queue_id,
        "version": change.version,
        "item": summary(change.interrupt) if change.interrupt is not None else None,
    }


def publish_changes(change_ids: list[int]) -> None:
    """Publish these committed changes to their queues' groups, in version order, off the
    committing thread (``publisher.py``). Never raises."""
    publisher.submit(lambda: _publish_changes(change_ids))


def _publish_changes(change_ids: list[int]) -> None:
    rows = (
        QueueChange.objects.filter(pk__in=change_ids)
        .select_related("interrupt__queue", "interrupt__claimed_by")
        .order_by("queue_id", "version")
    )
    for change in rows:
        try:
            publisher.send(group_name(change.queue_id), {"type": "inbox.message", **change_message(change)})
        except Exception:  # a lost live message is caught up on reconnect; never fail the commit for it
            logger.exception("Could not publish change %s of queue %s", change.version, change.queue_id)
