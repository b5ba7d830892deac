"""``OrmStore.commit``: one run's progress written in one transaction (see ``store.py``'s guarantees).

The session row's conditional update comes first (it takes the row's lock: one session's commits
queue up), then the events, the shared state, the interrupts opened and cancelled, the answers
applied, the pause's checkpoint and the outbox rows; the relay of those runs after the commit
(``outbox.py``). Rows are written in plain SQL (``store_sql.py``, ``store_writes.py``): every
node run of every session comes through here.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

import engine
from engine import RETRY_KEY, Commit, SessionRecord, split_delta

from . import store_sql, store_writes
from .domain_events import DomainEvent, InterruptCancelled, InterruptOpened, SessionStatusChanged
from .models import SESSION_FAILED, Answer, Interrupt, InterruptStatus, SharedState, WorkflowSession
from .outbox import outbox_write
from .store_rows import interrupt_fields

__all__ = ["commit_write"]


@transaction.atomic
def commit_write(session_id: str, commit: Commit) -> SessionRecord:
    """Write ``commit``; the session's record after it.

    Raises:
        ConcurrencyError: the version moved on, or the run lost its lease.
        SessionNotFoundError: no such session.
        StuckSessionError: a waiting commit after which nothing could resume the session.
    """
    now = timezone.now()
    state = commit.state if commit.state is not None else _state_after(session_id, commit.events)
    checkpoint_id = uuid.uuid4().hex if commit.pause and commit.checkpoint is not None else None
    row = store_sql.update_session(
        session_id, commit, state=state, now=now, checkpoint_id=checkpoint_id, events=len(commit.events)
    )
    if commit.status == engine.SessionStatus.WAITING and not commit.opened:
        _check_resumable(session_id, commit)
    store_sql.insert_events(session_id, commit.events, row.last_seq)
    for event in commit.events:
        _, app_delta, user_delta = split_delta(event.state_delta)
        if app_delta:
            _update_shared(row.workflow, "", app_delta)
        if user_delta:
            _update_shared(row.workflow, row.user_id, user_delta)
    reported: list[DomainEvent] = []
    if commit.opened:
        # A retry asks again the interrupts its session's failure cancelled.
        retrying = any(RETRY_KEY in (e.custom_metadata or {}) for e in commit.events)
        opened = store_writes.insert_interrupts(session_id, commit.opened, now)
        reported += [
            InterruptOpened(
                session_id=session_id,
                interrupt_pk=pk,
                workflow=row.workflow,
                title=row.title,
                record={**interrupt_fields(rec), "created_at": now.isoformat()},
                reopens=retrying,
            )
            for pk, rec in zip(opened, commit.opened, strict=True)
        ]
    if commit.cancelled:
        failed = commit.status == engine.SessionStatus.FAILED  # said so on the item's page
        cancelled = store_writes.interrupts_cancelled(
            session_id, commit.cancelled, now, SESSION_FAILED if failed else ""
        )
        cause = SESSION_FAILED if failed else "superseded"
        reported += [
            InterruptCancelled(session_id, pk, wire, cause=cause, decided_at=now.isoformat()) for pk, wire in cancelled
        ]
    if commit.consumed:
        store_writes.answers_applied(session_id, commit.consumed, now)
    if checkpoint_id is not None:
        assert commit.checkpoint is not None  # checkpoint_id is only drawn for one
        store_writes.insert_checkpoint(checkpoint_id, session_id, commit.checkpoint, row.last_seq, state, now)
    if commit.status in engine.SessionStatus.CLOSED:
        error = commit.error if isinstance(commit.error, dict) else {}
        reported.append(
            SessionStatusChanged(
                session_id=session_id,
                workflow=row.workflow,
                status=commit.status,
                output=row.output if commit.status == engine.SessionStatus.COMPLETED else None,
                error_code=error.get("code", "error") if commit.status == engine.SessionStatus.FAILED else None,
                error_node_path=error.get("node_path"),
            )
        )
    outbox_write(session_id, reported)
    return SessionRecord(
        id=session_id,
        app_name=row.workflow,
        user_id=row.user_id,
        state=dict(state),
        status=commit.status,
        checkpoint=commit.checkpoint,
        checkpoint_id=row.checkpoint_id or None,
        version=commit.expected_version + 1,
        workflow_version=row.workflow_version,
        invocation_id=row.invocation_id,
        output=row.output,
        error=commit.error,
        metadata=dict(row.metadata),
        updated_at=now.timestamp(),
    )


def _check_resumable(session_id: str, commit: Commit) -> None:
    """Refuse a ``waiting`` commit after which nothing can resume the session (no pending
    interrupt, no answer left to apply, no message awaited): two indexed EXISTS queries, only
    for waiting commits that open no interrupt.

    Raises:
        StuckSessionError: the transaction rolls back; nothing is stored.
    """
    if engine.awaits_message(commit.checkpoint):
        return
    pending = Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)
    if pending.exclude(interrupt_id__in=commit.cancelled).exists():
        return
    unapplied = Answer.objects.filter(session_id=session_id, applied_at__isnull=True)
    if unapplied.exclude(pk__in=commit.consumed).exists():
        return
    raise engine.StuckSessionError(f"Session {session_id} would wait with nothing to resume it.", session_id=session_id)


def _state_after(session_id: str, events: list[engine.Event]) -> dict[str, Any]:
    """The stored state with the session keys of ``events``' deltas applied (for writers that do not track it)."""
    state: dict[str, Any] = WorkflowSession.objects.values_list("state", flat=True).get(pk=session_id)
    for event in events:
        state.update(split_delta(event.state_delta)[0])
    return state


def _update_shared(workflow: str, user_id: str, delta: dict[str, Any]) -> None:
    shared, _ = SharedState.objects.select_for_update().get_or_create(workflow=workflow, user_id=user_id)
    shared.state.update(delta)
    shared.save(update_fields=["state"])
