"""Rows to the engine's records and back: sessions, interrupts, events.

Shared by the ORM store (:mod:`.store`) and checkpoint restore (:mod:`.restore`), which write
events and read sessions the same way.
"""

from __future__ import annotations

from typing import Any

import engine
from engine import AlreadyDecidedError, InterruptRecord, SessionNotFoundError, SessionRecord

from .event_rows import stored_data
from .models import Event, Interrupt, WorkflowSession

__all__ = [
    "append_events",
    "interrupt_asked",
    "interrupt_fields",
    "interrupt_record",
    "locked_session",
    "session_record",
]


def session_record(row: WorkflowSession) -> SessionRecord:
    """The engine's view of a session row."""
    return SessionRecord(
        id=row.id,
        app_name=row.workflow,
        user_id=row.user_id,
        state=dict(row.state),
        status=row.status,
        checkpoint=row.checkpoint,
        checkpoint_id=row.checkpoint_id or None,
        version=row.version,
        workflow_version=row.workflow_version,
        invocation_id=row.invocation_id,
        output=row.output,
        error=row.error,
        metadata=dict(row.metadata),
        created_at=row.created_at.timestamp() if row.created_at else 0.0,
        updated_at=row.updated_at.timestamp() if row.updated_at else 0.0,
    )


def interrupt_fields(rec: InterruptRecord) -> dict[str, Any]:
    """The columns of a new session ``Interrupt`` row for ``rec`` (what was asked; JSON-able)."""
    return {
        "interrupt_id": rec.id,
        "local_id": rec.local_id,
        "kind": rec.kind,
        "function_name": rec.function_name,
        "node_path": rec.path,
        "branch": rec.branch or "",
        "invocation_id": rec.invocation_id,
        "message": rec.message or "",
        "payload": rec.payload,
        "response_schema": rec.response_schema,
        "tool_call": rec.tool_call,
        "metadata": dict(rec.metadata or {}),
    }


def interrupt_asked(row: Interrupt) -> dict[str, Any]:
    """What was asked, as ``InterruptOpened.record`` carries it (``interrupt_fields`` and ``created_at``)."""
    names = ("interrupt_id", "local_id", "kind", "function_name", "node_path", "branch", "invocation_id")
    fields: dict[str, Any] = {name: getattr(row, name) for name in names}
    fields.update(
        message=row.message,
        payload=row.payload,
        response_schema=row.response_schema,
        tool_call=row.tool_call,
        metadata=dict(row.metadata or {}),
        created_at=row.created_at.isoformat(),
    )
    return fields


def interrupt_record(row: Interrupt) -> InterruptRecord:
    """The engine's view of a session interrupt row."""
    return InterruptRecord(
        id=row.interrupt_id,
        session_id=row.session_id,
        kind=row.kind,
        path=row.node_path,
        local_id=row.local_id,
        function_name=row.function_name,
        branch=row.branch or None,
        message=row.message or None,
        payload=row.payload,
        response_schema=row.response_schema,
        tool_call=row.tool_call,
        metadata=dict(row.metadata),
        invocation_id=row.invocation_id,
        status=row.status,
        response=row.response,
        decided_by=row.decided_by_label or None,
        decided_at=row.decided_at.timestamp() if row.decided_at else None,
        created_at=row.created_at.timestamp() if row.created_at else 0.0,
    )


def locked_session(session_id: str) -> WorkflowSession:
    """The session row, locked for this transaction (``SELECT ... FOR UPDATE``).

    Raises :class:`engine.SessionNotFoundError` when there is none.
    """
    row = WorkflowSession.objects.select_for_update().filter(pk=session_id).first()
    if row is None:
        raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
    return row


def append_events(row: WorkflowSession, events: list[engine.Event]) -> None:
    """Store ``events`` after the session's last one, with consecutive ``seq`` numbers.

    Advances ``row.last_seq``; the caller saves the row in the same transaction.
    """
    last = row.last_seq
    rows = []
    for event in events:
        last += 1
        rows.append(
            Event(
                session=row,
                seq=last,
                event_id=event.id,
                invocation_id=event.invocation_id,
                author=event.author,
                node_path=event.node_info.path,
                branch=event.branch or "",
                timestamp=event.timestamp,
                data=stored_data(event),
            )
        )
    Event.objects.bulk_create(rows)
    row.last_seq = last


def already_decided(row: Interrupt) -> AlreadyDecidedError:
    """The refusal of an answer to ``row``, which is no longer pending (who decided it and when)."""
    when = row.decided_at.isoformat() if row.decided_at else None
    return AlreadyDecidedError(
        f"Interrupt {row.interrupt_id} was already {row.status}"
        + (f" by {row.decided_by_label}" if row.decided_by_label else "")
        + (f" at {when}" if when else "")
        + ".",
        interrupt_id=row.interrupt_id,
        decided_by=row.decided_by_label or None,
        decided_at=when,
    )
