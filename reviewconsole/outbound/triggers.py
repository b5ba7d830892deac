"""What the ORM store calls after a commit: turn interrupt and session changes into events.

Called from ``transaction.on_commit`` (so only committed changes are announced). It never raises:
an outbound failure must not fail the run that committed; it is logged instead.
"""

from __future__ import annotations

import logging
from typing import Any

from ..inbox.models import Interrupt
from ..inbox.serializers import item_json
from ..workflow_sessions.models import WorkflowSession
from .services import enabled_subscriptions, event_emit

logger = logging.getLogger("reviewconsole.outbound")

__all__ = ["SESSION_STATUSES", "interrupt_data", "session_committed"]

_SESSION_EVENTS = {"completed": "session.completed", "failed": "session.failed"}
SESSION_STATUSES = frozenset(_SESSION_EVENTS)
"""Session statuses that are announced (a commit with another status announces only interrupts)."""


_INTERRUPT_FIELDS = (
    "session_id",
    "workflow",
    "kind",
    "function_name",
    "queue",
    "status",
    "message",
    "payload",
    "response",
    "decision",
    "decided_by",
    "decided_at",
    "created_at",
)


def interrupt_data(row: Interrupt) -> dict[str, Any]:
    """An interrupt as outbound events describe it: the inbox's ``item_json``, its ``id`` named
    ``interrupt_id`` and only these fields (subscribers' payloads keep their keys)."""
    item = item_json(row)
    return {"interrupt_id": item["id"], **{name: item[name] for name in _INTERRUPT_FIELDS}}


def session_committed(*, session_id: str, opened: list[int], resolved: list[int], status: str | None) -> None:
    """Emit ``interrupt.created`` / ``interrupt.resolved`` for these rows, and ``session.completed`` /
    ``session.failed`` when the commit ended a run that way (only a run's last commit carries those)."""
    try:
        _emit(session_id, opened, resolved, status)
    except Exception:
        logger.exception("Could not emit outbound events for session %s", session_id)


def _emit(session_id: str, opened: list[int], resolved: list[int], status: str | None) -> None:
    if not enabled_subscriptions():
        return
    ids = [i for i in [*opened, *resolved] if i is not None]
    if ids:
        rows = Interrupt.objects.select_related("queue", "session").filter(pk__in=ids).order_by("id")
        for row in rows:
            event = "interrupt.created" if row.pk in opened and row.status == "pending" else "interrupt.resolved"
            event_emit(event_type=event, workflow=row.session.workflow, data=interrupt_data(row))
    if status in _SESSION_EVENTS:
        session = WorkflowSession.objects.filter(pk=session_id).first()
        if session is None:
            return
        data: dict[str, Any] = {"session_id": session.id, "workflow": session.workflow, "status": session.status}
        if status == "completed":
            data["output"] = session.output
        else:
            error = session.error if isinstance(session.error, dict) else {}
            # The code and where, not the message: that may quote an exception (kept in the server log).
            data["error"] = {"code": error.get("code", "error"), "node_path": error.get("node_path")}
        event_emit(event_type=_SESSION_EVENTS[status], workflow=session.workflow, data=data)
