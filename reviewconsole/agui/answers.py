"""A client's answers, read by the inbox's rules and stored (the AG-UI door's ``resume``; sync ORM
work: :mod:`.resume` calls these on a thread, ``hops.hop``, one hop each)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

import engine

from ..api.models import ApiClient
from ..inbox.errors import DecisionError, DecisionRefusedError
from ..inbox.items.answers import Answer, read_answer, read_decided
from ..inbox.items.decision_checks import audit_refusal, check_before_decision
from ..inbox.items.policy_gate import client_gate
from ..inbox.items.receipts import decided_refusal, is_repeat
from ..inbox.items.refusals import claimed_conflict, newer_request
from ..inbox.models import Item, ItemStatus
from ..workflow_sessions.models import Interrupt
from ..workflow_sessions.services import enqueue_run, interrupt_answer_sync
from .errors import Refusal

__all__ = [
    "answers_store",
    "decided_conflict",
    "decider",
    "newer_interrupt",
    "read_answers",
    "reopened",
    "replayed",
    "rewind_answers_check",
]


def read_answers(
    session_id: str, answers: dict[str, Any], *, override_claims: bool = False, decided_by: str = ""
) -> dict[str, Answer]:
    """Read each answer once (``inbox.answers.read_answer``): the decision it stands for and the
    normalised payload to store, by interrupt id (answers to no pending item are left out: the
    engine refuses them). Refuses an answer to an interrupt a reviewer has claimed (unless
    ``override_claims``), one its request kind does not support or cannot read, an empty
    free-text one or one over its maximum length, an approval an approval policy's four eyes
    leave to two people in the inbox, and one a check of the workflow refuses
    (``before_decision``: audited as ``interrupt.decide_refused`` by ``decided_by``).

    Raises:
        Refusal: ``interrupt_claimed``, ``action_not_supported``, ``answer_invalid``,
            ``answer_too_long``, ``answer_missing``, ``four_eyes_required`` or ``decision_refused``
            (the workflow's message); nothing was stored.
    """
    rows = Item.objects.filter(session_id=session_id, status=ItemStatus.PENDING, interrupt_id__in=list(answers))
    read: dict[str, Answer] = {}
    for row in rows.select_related("claimed_by"):  # its session is read only where a check needs it
        if row.claim_holder() and not override_claims:
            raise Refusal("interrupt_claimed", claimed_conflict(row).message)
        read[row.interrupt_id] = _read(row, answers[row.interrupt_id], decided_by)
    return read


def rewind_answers_check(session_id: str, answers: dict[str, Any], *, decided_by: str) -> None:
    """Read ``answers`` to the interrupts a rewind is about to open again as :func:`read_answers`
    will once they are pending (by each one's newest item, whatever its status now; a rewind
    leaves no claim), so that a rewind whose answers would be refused is refused before it rewinds.

    Raises:
        Refusal: as :func:`read_answers`, ``interrupt_claimed`` aside; nothing was stored.
    """
    newest: dict[str, Item] = {}
    for row in Item.objects.filter(session_id=session_id, interrupt_id__in=list(answers)).order_by("-id"):
        newest.setdefault(row.interrupt_id, row)
    for wire, row in newest.items():
        _read(row, answers[wire], decided_by)


def _read(row: Item, value: Any, decided_by: str) -> Answer:
    """``value`` read as an answer to ``row`` (``inbox.answers.read_answer``), refused when the
    approval policy's four eyes or a check of the workflow refuse it (:func:`read_answers`)."""
    try:
        answer = read_answer(row, value)
        if client_gate(item=row, decision=answer.decision) == "four_eyes":  # who decides comes first
            raise Refusal("four_eyes_required")
        check_before_decision(
            row,
            decision=answer.decision,
            reason=answer.reason,
            response=answer.payload,
            decided_by=decided_by,
            door="agui",
        )
    except DecisionRefusedError as exc:
        audit_refusal(exc, actor=decided_by or None)
        raise Refusal(exc.code, exc.message) from None
    except DecisionError as exc:
        raise Refusal(exc.code, exc.message) from None
    return answer


def decider(client: ApiClient) -> str:
    """Who an API client is on its AG-UI threads: its answers' ``decided_by`` (a rewind may re-open
    only these), its queued messages' and audit entries' actor (``agui:<client name>``)."""
    return f"agui:{client.name}"


def decided_conflict(
    session_id: str, interrupt_id: str, payload: Any, *, decided_by: str, cancel: bool = False
) -> engine.AlreadyDecidedError | None:
    """Why an answer (``payload``, by ``decided_by``) to ``interrupt_id``, no longer pending, is
    refused: ``interrupt_decided``, naming who decided what and when
    (``inbox.items.receipts.decided_refusal``, as the API's 409); None when it was resolved by
    ``decided_by`` with this same answer (a replay, e.g. a retried request: harmless, left alone),
    or cancelled (the run's outcome says so). A client whose answer lost is told, never shown
    the winner's outcome as its own. With ``cancel`` it is the client's cancellation: refused
    whenever the interrupt was resolved (the decision stored first stands)."""
    row = Interrupt.objects.newest(session_id, interrupt_id)
    refused = decided_refusal(row) if row is not None else None
    if row is None or refused is None or cancel:
        return refused
    return None if _same(row, payload, decided_by) else refused


def replayed(session_id: str, interrupt_id: str, payload: Any, *, decided_by: str) -> bool:
    """Whether ``payload`` is ``decided_by``'s own decision on ``interrupt_id``, sent again (a
    retried request): the interrupt was decided, by ``decided_by``, with this same answer."""
    row = Interrupt.objects.newest(session_id, interrupt_id)
    return row is not None and decided_refusal(row) is not None and _same(row, payload, decided_by)


def reopened(session_id: str, interrupt_id: str) -> bool:
    """Whether ``interrupt_id`` was asked more than once in the session (a rewind, or a retry of a
    failed session, opened it again under the same wire id)."""
    return Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).count() > 1


def _same(row: Interrupt, payload: Any, decided_by: str) -> bool:
    """``payload`` by ``decided_by`` is the decision stored on ``row`` (``inbox.items.answers.is_repeat``)."""
    again = read_decided(row, payload)
    if again is None:  # no item to read it by: the payload itself, as the engine stores it
        return is_repeat(row, decided_by=decided_by, decision=row.decision, payload=payload, reason=row.reason or "")
    return is_repeat(row, decided_by=decided_by, decision=again.decision, payload=again.payload, reason=again.reason)


def newer_interrupt(session_id: str, interrupt_id: str) -> str | None:
    """The id of the newer request that replaced ``interrupt_id`` in the session (``inbox.refusals.newer_request``)."""
    row = Item.objects.filter(session_id=session_id, interrupt_id=interrupt_id).first()
    newer = newer_request(row) if row is not None else None
    return newer.interrupt_id if newer is not None else None


def answers_store(
    session_id: str,
    answers: dict[str, Any],
    *,
    decided_by: str,
    override_claims: bool = False,
    queue_run: dict[str, Any] | None = None,
) -> None:
    """Read each answer (:func:`read_answers`), then store them with the decisions they stand for
    (``interrupt_answer_sync``), in one call (one hop from the stream).
    With ``queue_run`` (the run's metadata) the run is queued in the answers' transaction, first
    (``enqueue_run``, when ``runs_wait_in_queue``): the worker is woken as they commit, before
    the outbox relay tells the inbox; refused answers queue nothing.

    Raises:
        Refusal: whatever :func:`read_answers` refuses; nothing was stored.
        Everything ``interrupt_answer_sync`` raises.
    """
    read = read_answers(session_id, answers, override_claims=override_claims, decided_by=decided_by)
    payloads = {wire: read[wire].payload if wire in read else value for wire, value in answers.items()}
    decisions = {
        wire: engine.Decision(kind=answer.decision, reason=answer.reason, edit_diff=answer.edit_diff)
        for wire, answer in read.items()
    }
    with transaction.atomic():
        if queue_run is not None:
            enqueue_run(session_id, metadata=queue_run)
        interrupt_answer_sync(session_id, payloads, decided_by=decided_by, decisions=decisions)
