"""``OrmStore.submit_answers``: answers taken in one transaction (see ``store.py``'s guarantees).

Reserving the answer event's seq locks the session row first, so answers to one session queue
up; each final answer resolves its interrupt with one conditional ``UPDATE … RETURNING``
(``store_writes.interrupt_resolved``): of two reviewers deciding at the same moment exactly one
changes the row, the other gets :class:`engine.AlreadyDecidedError` and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

import engine
from engine import AnswerGuard, Decision, UnknownInterruptError

from . import store_sql, store_writes
from .domain_events import DomainEvent, InterruptAnswered
from .models import Interrupt, InterruptStatus
from .outbox import outbox_write
from .store_rows import already_decided

__all__ = ["answers_write"]


@transaction.atomic
def answers_write(
    session_id: str,
    answers: list[engine.Answer],
    event: engine.Event,
    decided_by: str | None,
    decisions: Mapping[str, Decision],
    guard: AnswerGuard | None,
) -> None:
    """Store ``answers`` and their ``event`` for the session's next run.

    Raises:
        SessionNotFoundError: no such session.
        AlreadyDecidedError: an interrupt answered is no longer pending (who decided it, when).
        UnknownInterruptError: an answer names no interrupt of the session.
        Whatever ``guard.check`` raises to refuse (the inbox's claim and due time).
    """
    now = timezone.now()
    last_seq = store_sql.append_seq(session_id, 1, now)
    answered: list[str] = []
    reported: list[DomainEvent] = []
    for answer in answers:
        if not answer.interrupt_id:
            continue
        if not answer.final:
            if not Interrupt.objects.filter(
                session_id=session_id, interrupt_id=answer.interrupt_id, status=InterruptStatus.PENDING
            ).exists():
                _refuse(session_id, answer.interrupt_id, answered)
            continue
        if guard is not None:
            guard.check(session_id, answer.interrupt_id)  # raises to refuse (the inbox's 409s)
        decision = decisions.get(answer.interrupt_id) or Decision()
        pk = store_writes.interrupt_resolved(
            session_id,
            answer.interrupt_id,
            {
                "response": answer.value,
                "decision": decision.kind,
                "reason": decision.reason,
                "decided_by": decision.user_id,
                "decided_by_label": decided_by or "",
                "decided_at": now,
            },
        )
        if pk is None:
            _refuse(session_id, answer.interrupt_id, answered)
        answered.append(answer.interrupt_id)
        reported.append(
            InterruptAnswered(
                session_id=session_id,
                interrupt_pk=pk,  # type: ignore[arg-type]
                interrupt_id=answer.interrupt_id,
                decision=decision.kind,
                decided_by=decided_by or "",
                decided_by_id=decision.user_id,
                reason=decision.reason,
                edit_diff=decision.edit_diff,
                response=answer.value,
                decided_at=now.isoformat(),
                timeout=decision.kind == "timeout",
            )
        )
    store_sql.insert_events(session_id, [event], last_seq)
    if answers:
        store_writes.insert_answers(session_id, [(a.interrupt_id, a.value, a.final) for a in answers], now)
    outbox_write(session_id, reported)


def _refuse(session_id: str, interrupt_id: str, answered: list[str]) -> None:
    """Raise why an answer for ``interrupt_id`` cannot be taken (``answered``: wire ids this batch resolved)."""
    pending = sorted({*store_writes.interrupts_pending(session_id), *answered})
    row = Interrupt.objects.newest(session_id, interrupt_id)
    if row is None or interrupt_id in pending:
        raise UnknownInterruptError(f"No pending interrupt {interrupt_id!r}.", pending=pending)
    raise already_decided(row)
