"""Items made directly (no workflow run), for pages, filters and query plans: each inbox row
with the session's own interrupt row behind it (``workflow_sessions.Interrupt``), as the outbox
relay would have built them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from reviewconsole.inbox.items.assignment import search_text
from reviewconsole.inbox.models import Item, Queue
from reviewconsole.workflow_sessions.models import Interrupt as SessionInterrupt
from reviewconsole.workflow_sessions.models import WorkflowSession

ASKED = ("session_id", "interrupt_id", "local_id", "kind", "function_name", "node_path", "branch", "message")
ASKED += ("payload", "response_schema", "tool_call", "metadata", "status", "response", "decision", "reason")
ASKED += ("decided_by_id", "decided_by_label", "decided_at")


def make_items(queue: Queue, count: int, *, start: dt.datetime | None = None, **fields: Any) -> list[Item]:
    """``count`` pending items in ``queue``, one second apart from ``start`` (default: an hour ago).

    ``fields`` override columns of every row (e.g. ``workflow=``, ``due_at=``, ``kind=``).
    """
    start = start or timezone.now() - dt.timedelta(hours=1)
    session = WorkflowSession.objects.create(workflow=fields.get("workflow", "email-review"), user_id="factory")
    rows = []
    for n in range(count):
        title = fields.get("title", f"Request {n} in {queue.slug}")
        message = fields.get("message", f"Please review item {n}")
        rows.append(
            Item(
                session=session,
                workflow=fields.get("workflow", "email-review"),
                title=title,
                interrupt_id=f"{queue.slug}-{session.pk[:8]}-{n}",
                kind=fields.get("kind", "input"),
                message=message,
                payload=fields.get("payload"),
                metadata=fields.get("metadata", {}),
                search_text=search_text(title, message, fields.get("payload")),
                queue=queue,
                due_at=fields.get("due_at"),
                on_expiry=fields.get("on_expiry", ""),
            )
        )
    for n, row in enumerate(rows):
        row.created_at = start + dt.timedelta(seconds=n)
    return bulk_insert(rows)


def session_interrupts(rows: list[Item]) -> None:
    """Create the session's interrupt behind each item (unsaved ones included) and link it."""
    now = timezone.now()
    behind = SessionInterrupt.objects.bulk_create(
        [
            SessionInterrupt(created_at=row.created_at or now, **{name: getattr(row, name) for name in ASKED})
            for row in rows
        ],
        batch_size=2000,
    )
    for row, asked in zip(rows, behind, strict=True):
        row.session_interrupt = asked


def bulk_insert(rows: list[Item]) -> list[Item]:
    """``bulk_create`` keeping the rows' own ``created_at`` (normally ``auto_now_add``), each with
    its session interrupt."""
    session_interrupts(rows)
    field = Item._meta.get_field("created_at")
    field.auto_now_add = False  # type: ignore[attr-defined]
    try:
        return Item.objects.bulk_create(rows, batch_size=2000)
    finally:
        field.auto_now_add = True  # type: ignore[attr-defined]
