"""Rewinding a session to one of its pause checkpoints (``OrmStore.restore_checkpoint``).

One transaction, under the session's row lock. Nothing is deleted: the rewind is an appended
event (:func:`engine.rewind_event`) whose state delta turns the current state back into the
state stored with the checkpoint. Interrupts pending at that pause are pending again under the
same wire ids — a decided one is re-opened as a new row copied from the newest one with that id
(rows keep their decisions) — interrupts opened later are cancelled, and answers not yet applied
are marked applied so that no run applies them. The outbox says so (``interrupt.cancelled`` with
cause ``restored``, ``interrupt.opened`` with ``restored``), in the same transaction.

Refused before anything changes: a closed session (completed, failed, cancelled: it never runs
again), and a rewind that would re-open an interrupt decided by someone other than the rewinder.
The rule: a resolved interrupt may be re-opened only when it was decided under the rewinder's
own ``decided_by`` label (an AG-UI thread's ``agui:<client>``, which only that session's thread
writes) and not by a user account; a reviewer's, an API client's (``client:<name>``) or the
expiry's decision is final. Cancelled interrupts (nobody decided them) are re-opened. Nor may a
rewind go back past such a decision made after the checkpoint (on an interrupt opened later).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from engine import (
    CheckpointDecidedError,
    ConcurrencyError,
    SessionClosedError,
    SessionRecord,
    SessionStatus,
    rewind_event,
)

from .domain_events import DomainEvent, InterruptCancelled, InterruptOpened
from .event_rows import COLUMNS, event_json
from .models import Answer, Checkpoint, Event, Interrupt, InterruptStatus, WorkflowSession
from .outbox import outbox_write
from .store_rows import append_events, interrupt_asked, locked_session, session_record

__all__ = ["restore_checkpoint"]


def _state_at(row: WorkflowSession, checkpoint: Checkpoint) -> dict[str, Any]:
    """The session state as of the checkpoint: stored with it, else replayed from its events."""
    if checkpoint.state is not None:
        return dict(checkpoint.state)
    state: dict[str, Any] = {}
    events = Event.objects.filter(session=row, seq__lte=checkpoint.event_seq).order_by("seq")
    for row_values in events.values_list(*COLUMNS):
        data = event_json(*row_values)
        delta = (data.get("actions") or {}).get("stateDelta") or {}
        state.update({k: v for k, v in delta.items() if not k.startswith(("app:", "user:", "temp:"))})
    return state


def _refuse_others_decisions(row: WorkflowSession, wires: list[str], decided_by: str | None) -> None:
    """Raise CheckpointDecidedError for the first of ``wires`` (to re-open) that someone else decided."""
    for wire in wires:
        newest = Interrupt.objects.newest(row.pk, wire)
        if newest is None or newest.status != InterruptStatus.RESOLVED:
            continue
        label = newest.decided_by_label or None
        if newest.decided_by_id is not None or label != decided_by:
            when = newest.decided_at.timestamp() if newest.decided_at else None
            raise CheckpointDecidedError.for_interrupt(wire, label, when)


def _refuse_later_decisions(row: WorkflowSession, checkpoint: Checkpoint, decided_by: str | None) -> None:
    """Raise CheckpointDecidedError when someone else decided an interrupt after the checkpoint.

    Going back past such a decision would undo it even though it is not re-opened (an interrupt
    opened after the pause, e.g. a reviewer's approval the rewinder could then answer itself).
    """
    others = Q(decided_by__isnull=False) | ~Q(decided_by_label=decided_by or "")
    later = (
        Interrupt.objects.filter(session=row, status=InterruptStatus.RESOLVED, decided_at__gt=checkpoint.created_at)
        .filter(others)
        .order_by("decided_at")
        .first()
    )
    if later is not None:
        when = later.decided_at.timestamp() if later.decided_at else None
        raise CheckpointDecidedError.for_interrupt(later.interrupt_id, later.decided_by_label or None, when)


def _reopen(row: WorkflowSession, wire: str, now: dt.datetime) -> Interrupt | None:
    newest = Interrupt.objects.newest(row.pk, wire)
    if newest is None:
        return None
    newest.pk = None
    newest.status = InterruptStatus.PENDING
    newest.response = None
    newest.decision = ""
    newest.decided_by = None
    newest.decided_by_label = ""
    newest.decided_at = None
    newest.reason = ""
    newest.created_at = now
    newest.save()
    return newest


@transaction.atomic
def restore_checkpoint(
    session_id: str, checkpoint_id: str, *, lease_owner: str | None, decided_by: str | None = None
) -> SessionRecord | None:
    """See :meth:`engine.Store.restore_checkpoint`; ``decided_by`` is the rewinder's label.

    Raises:
        SessionNotFoundError: no such session.
        ConcurrencyError: ``lease_owner`` does not hold the lease.
        SessionClosedError: the session is completed, failed or cancelled; nothing changed.
        CheckpointDecidedError: an interrupt to re-open was decided by someone else (see the
            module docstring for the rule); nothing changed.
    """
    row = locked_session(session_id)
    checkpoint = Checkpoint.objects.filter(session=row, pk=checkpoint_id).first()
    if checkpoint is None:
        return None
    if lease_owner is not None and row.lease_owner != lease_owner:
        raise ConcurrencyError(f"Session {session_id}: the run lost its lease.", session_id=session_id)
    if row.status in SessionStatus.CLOSED:
        raise SessionClosedError(
            f"Session {session_id} is {row.status}; it cannot be rewound.", session_id=session_id, status=row.status
        )
    wanted = list(checkpoint.pending or [])
    still_pending = set(
        Interrupt.objects.filter(session=row, status=InterruptStatus.PENDING, interrupt_id__in=wanted).values_list(
            "interrupt_id", flat=True
        )
    )
    _refuse_others_decisions(row, [wire for wire in wanted if wire not in still_pending], decided_by)
    _refuse_later_decisions(row, checkpoint, decided_by)
    now = timezone.now()
    restored = _state_at(row, checkpoint)
    invocation_id = str(checkpoint.data.get("invocation_id") or row.invocation_id)
    append_events(
        row,
        [rewind_event(checkpoint_id=checkpoint.pk, invocation_id=invocation_id, current=row.state, restored=restored)],
    )
    later = Interrupt.objects.filter(session=row, status=InterruptStatus.PENDING).exclude(interrupt_id__in=wanted)
    cancelled = list(later.values_list("pk", "interrupt_id"))
    later.update(status=InterruptStatus.CANCELLED, decided_at=now)
    pending_now = set(
        Interrupt.objects.filter(session=row, status=InterruptStatus.PENDING).values_list("interrupt_id", flat=True)
    )
    reopened = [_reopen(row, wire, now) for wire in wanted if wire not in pending_now]
    Answer.objects.filter(session=row, applied_at__isnull=True).update(applied_at=now)
    row.state = restored
    row.checkpoint = checkpoint.data
    row.checkpoint_id = checkpoint.pk
    row.status = SessionStatus.WAITING
    row.invocation_id = invocation_id
    row.output = None
    row.error = None
    row.version += 1
    row.save()
    reported: list[DomainEvent] = [
        InterruptCancelled(session_id, pk, wire, cause="restored", decided_at=now.isoformat()) for pk, wire in cancelled
    ]
    reported += [
        InterruptOpened(
            session_id=session_id,
            interrupt_pk=i.pk,
            workflow=row.workflow,
            title=row.title,
            record=interrupt_asked(i),
            reopens=True,
            restored=True,
        )
        for i in reopened
        if i is not None
    ]
    outbox_write(session_id, reported)
    return session_record(row)
