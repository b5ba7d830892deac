"""What API clients do to sessions: start, resume (answer an interrupt) and cancel.

Each runs inside the caller's transaction (the idempotency record commits with it), goes through
the engine's :class:`~engine.Runner` (validation against the stored schema, first answer wins) and
writes an audit entry naming the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from engine import AlreadyDecidedError, ArgsChangedError, Decision, InterruptKind

from ..audit.services import audit_record
from ..inbox.errors import CancelledError
from ..inbox.items.answers import Answer, read_answer, read_decided
from ..inbox.items.decision_checks import check_before_decision
from ..inbox.items.lifecycle import pending_item_ids, session_items_cancelled
from ..inbox.items.policy_gate import client_gate
from ..inbox.items.receipts import decided_refusal, is_repeat, receipt, refusal_record
from ..inbox.items.refusals import claimed_conflict, newer_request, refusal_for
from ..inbox.models import Item, ItemStatus
from ..workflow_sessions.arrivals import ArrivalResult, session_arrive
from ..workflow_sessions.models import Interrupt, InterruptStatus, WorkflowSession
from ..workflow_sessions.outcome import cancel_reason
from ..workflow_sessions.services import enqueue_run, interrupt_answer_sync, session_cancel_sync
from ..workflows import UnknownWorkflowError, get
from .errors import ApiError
from .models import ApiClient

__all__ = ["Resumed", "api_refusal_record", "api_session_cancel", "api_session_resume", "api_session_start"]


def _actor(client: ApiClient) -> str:
    return f"client:{client.name}"


def api_session_start(
    *, client: ApiClient, workflow: str, data: Any, request: HttpRequest, correlation_key: str | None = None
) -> ArrivalResult:
    """Start a session of ``workflow`` with ``data`` as its input, for ``client``; with a
    ``correlation_key`` whose session is open, the workflow's ``on_arrival`` applies
    (``workflow_sessions/arrivals.py``: started, queued or superseded).

    Raises:
        ApiError: 403 ``workflow_forbidden`` (not in the token's scope); 404 ``workflow_unknown``.
        engine.WorkflowDataError: ``data`` does not fit the workflow's input (field errors).
        SessionWaitingError: ``reject`` and the key's session is open (409 ``session_waiting``).
        engine.SessionBusyError: ``supersede`` while a run holds the open session (409, retry).
    """
    if not client.may_use(workflow):
        raise ApiError(403, "workflow_forbidden", "This token may not start that workflow.")
    try:
        spec = get(workflow)
    except UnknownWorkflowError:
        raise ApiError(404, "workflow_unknown", "No such workflow.") from None
    if spec.builtin:  # the review request: started by POST /api/v1/reviews only
        raise ApiError(404, "workflow_unknown", "No such workflow.")
    arrived = session_arrive(
        workflow=workflow,
        data=data,
        user_id=_actor(client),
        correlation_key=correlation_key or "",
        metadata={"api_client": client.name},
    )
    if arrived.outcome != "queued":
        audit_record(
            action="session.start",
            actor=_actor(client),
            target=arrived.session,
            request=request,
            detail={"workflow": workflow, "correlation_key": correlation_key or ""},
        )
    return arrived


def api_session_resume(
    *, client: ApiClient, session: WorkflowSession, interrupt_id: str | None, payload: Any, request: HttpRequest
) -> Resumed:
    """Answer ``interrupt_id`` (or the only pending interrupt) of ``session`` and queue the run.

    ``payload`` is the function response: the late result of a long-running tool (e.g.
    ``{"status": "approved"}`` for ``ask_for_approval``), ``{"confirmed": true, "args_digest":
    "<the interrupt's args_digest>"}`` for a tool confirmation (with ``"args": {...}`` to approve
    edited arguments, checked against the tool's parameters and exactly what runs), or an answer
    valid against the interrupt's ``response_schema``.

    Approvals are bound to the exact call (``engine._digest``): an approval of a tool call's
    confirmation names its ``interrupt_id`` and the ``args_digest`` the client was shown (a
    rejection needs neither; a long-running result's digest is checked when given). The same
    answer sent again by the same client is a no-op returning the first decision's receipt.
    Returns :class:`Resumed`.

    Raises:
        engine.AmbiguousAnswerError: no id while several are pending (400, ``pending`` listed).
        engine.UnknownInterruptError: the id names no pending interrupt (404).
        engine.InterruptNotReadyError: the session runs, or an earlier answer is stored and not
            yet applied: the interrupt may be about to open (409, ``Retry-After``).
        engine.AlreadyDecidedError: someone answered first, or this client with another answer
            (409, who, what and when).
        ApiError: 409 ``interrupt_decided`` for an answer naming no interrupt that repeats this
            client's answer to the session's previous request, while a request opened since is
            pending (:func:`_unnamed_repeat`: a retry or a double send must not answer a request
            nobody saw; ``pending`` lists the ids to name).
        CancelledError: the interrupt was cancelled, by its client, AG-UI's or a queue manager
            (409 ``interrupt_cancelled``: ``cancelled_by``, ``cancelled_at``, ``reason``).
        engine.ArgsChangedError: ``args_digest`` is not the call's: its arguments changed since
            they were shown (409 ``args_changed``).
        ApiError: 400 ``args_digest_required``: an approval of a tool call's confirmation without
            ``interrupt_id`` or ``payload.args_digest``.
        ApiError: 409 ``interrupt_claimed``: a reviewer holds the interrupt's claim and the token
            lacks the ``override_claims`` scope (``claimed_by``, ``claim_expires_at``).
        ApiError: 409 ``four_eyes_required``: an approval policy leaves it to two people in the inbox.
        engine.AlreadyDecidedError: also when an approval policy decided it (the view records the attempt).
        ApiError: 409 ``interrupt_superseded``: the interrupt was answered or cancelled and a newer
            request of the session replaced it (``newer_interrupt_id``, the session's ``url``).
        engine.AnswerInvalidError: the payload fails the interrupt's schema (400).
        ActionNotSupportedError: the payload stands for a decision the request kind does not
            support, e.g. feedback text to a VIP confirmation (400 ``action_not_supported``).
        AnswerShapeInvalidError: the payload has none of the shapes the request accepts
            (400 ``answer_invalid``; ``inbox.answers``). What is stored is the normalised payload,
            with the decision it stands for (as an inbox decision is recorded).
        DecisionRefusedError: a check of the workflow (``before_decision``) refused the decision
            (400 ``decision_refused``, the workflow's message); the view audits it.
        UnknownWorkflowError: the workflow is no longer registered (409); nothing is stored.
    """
    if interrupt_id is None and (repeated := _unnamed_repeat(client, session, payload)) is not None:
        raise repeated
    row, answer = _read_answer(client, session, interrupt_id, payload)
    stored = answer.payload if answer is not None else payload
    decision = answer.decision if answer is not None else "answer"
    if row is not None and answer is not None:
        _check_bound(row, interrupt_id, decision, stored)  # the call first: what the rest judges
        _check_policy(row, answer.decision)
        check_before_decision(
            row,
            decision=answer.decision,
            reason=answer.reason,
            response=answer.payload,
            decided_by=_actor(client),
            door="api",
        )
    recorded = Decision(kind=decision)
    if row is not None and answer is not None:
        recorded = Decision(kind=decision, reason=answer.reason, edit_diff=answer.edit_diff)
    wire = interrupt_id or (row.interrupt_id if row is not None else None)
    try:
        records = interrupt_answer_sync(
            session,
            {interrupt_id: stored},
            decided_by=_actor(client),
            decisions={wire: recorded} if wire else None,
        )
    except AlreadyDecidedError as exc:
        decided = Interrupt.objects.newest(session.pk, str(exc.details.get("interrupt_id") or interrupt_id or ""))
        again = answer if answer is not None else read_decided(decided, payload)
        if again is not None and is_repeat(
            decided, decided_by=_actor(client), decision=again.decision, payload=again.payload, reason=again.reason
        ):
            assert decided is not None
            return Resumed([decided.interrupt_id], receipt(decided), repeated=True)
        superseded = _superseded(session, str(exc.details.get("interrupt_id") or interrupt_id or ""))
        raise superseded or _cancelled(decided) or (decided and decided_refusal(decided)) or exc from None
    answered = [r.id for r in records]
    detail: dict[str, Any] = {}
    if row is not None and answer is not None:
        detail = {"reason": answer.reason, "edit_diff": answer.edit_diff, "queue": row.queue.slug}
    audit_record(
        action="interrupt.decide",
        actor=_actor(client),
        target=session,
        request=request,
        after={"interrupts": answered, "decision": decision, "response": stored},
        detail=detail,
    )
    enqueue_run(session.id)
    decided = Interrupt.objects.newest(session.pk, answered[0]) if len(answered) == 1 else None
    return Resumed(answered, receipt(decided) if decided is not None else None)


@dataclass(frozen=True)
class Resumed:
    """What a resume did: the interrupt ids ``answered``, the decision's ``receipt``
    (``inbox.items.receipts.receipt``; None when several were answered) and whether it was the
    same answer sent again (``repeated``: nothing stored, nothing run)."""

    answered: list[str]
    receipt: dict[str, Any] | None
    repeated: bool = False


def _check_bound(row: Item, interrupt_id: str | None, decision: str, payload: Any) -> None:
    """Refuse an answer not bound to the call it decides, before any other check (the workflow's
    checks judge the call the client was shown, so they come after): an approval of a tool call's
    confirmation that does not name its call, and any answer naming a digest other than the
    call's (a long-running tool's result too; the engine compares it again when it stores).
    Neither refusal says the expected digest: a client names the one it was shown, never one
    copied back from an error.

    Raises:
        ApiError: 400 ``args_digest_required``.
        engine.ArgsChangedError: 409 ``args_changed`` (``given``: the client's digest).
    """
    digest = (row.metadata or {}).get("args_digest")
    if not digest:
        return
    given = payload.get("args_digest") if isinstance(payload, dict) else None
    if row.kind == InterruptKind.CONFIRMATION and decision == "approve" and (not interrupt_id or not given):
        raise ApiError(
            400,
            "args_digest_required",
            "An approval of a tool call names its interrupt_id and the args_digest it was shown"
            ' (payload {"confirmed": true, "args_digest": ...}); nothing was recorded.',
            interrupt_id=row.interrupt_id,
        )
    if isinstance(given, str) and given.lower() != digest:
        raise ArgsChangedError(
            "The args_digest given does not match the tool call's arguments (a wrong digest, or arguments"
            " changed since they were shown): review the call again.",
            interrupt_id=row.interrupt_id,
            given=given[:80],
        )


def api_refusal_record(
    exc: BaseException, *, client: ApiClient, session: WorkflowSession, interrupt_id: str | None, request: HttpRequest
) -> None:
    """Audit a resume refused for the call it names (``inbox.items.receipts.refusal_record``)."""
    refusal_record(exc, actor=_actor(client), target=session, interrupt_id=interrupt_id, request=request)


def _read_answer(
    client: ApiClient, session: WorkflowSession, interrupt_id: str | None, payload: Any
) -> tuple[Item | None, Answer | None]:
    """The pending item ``payload`` answers and its reading (``inbox.answers.read_answer``: the
    decision and the normalised payload); ``(None, None)`` when no single pending item matches
    (the engine refuses that answer). Refuses an answer the item cannot take, or one to an item a
    reviewer holds when the token may not override claims; the engine checks everything else."""
    rows = Item.objects.filter(session=session, status=ItemStatus.PENDING).select_related("session", "queue")
    if interrupt_id is not None:
        rows = rows.filter(interrupt_id=interrupt_id)
    found = list(rows.select_related("claimed_by")[:2])
    if len(found) != 1:
        return None, None
    row = found[0]
    if row.claim_holder() and not client.may_override_claims:
        conflict = claimed_conflict(row)
        raise ApiError(409, "interrupt_claimed", conflict.message, interrupt_id=row.interrupt_id, **conflict.details)
    return row, read_answer(row, payload)


def _unnamed_repeat(client: ApiClient, session: WorkflowSession, payload: Any) -> ApiError | None:
    """409 ``interrupt_decided`` when ``payload``, sent naming no interrupt, is the answer this
    client gave the session's newest request it decided, and a request opened after that decision
    is pending; else None.

    Without the refusal the copy answers the request the first answer led to (the next draft),
    which the client never saw: a request sent twice, or retried after a lost reply, would count
    as two decisions. The same answer meant for the new request names its ``interrupt_id``."""
    actor = _actor(client)
    previous = (
        Interrupt.objects.filter(session=session, status=InterruptStatus.RESOLVED, decided_by_label=actor)
        .order_by("-decided_at", "-pk")
        .first()
    )
    if previous is None or previous.decided_at is None:
        return None
    pending = list(
        Interrupt.objects.filter(
            session=session, status=InterruptStatus.PENDING, created_at__gt=previous.decided_at
        ).values_list("interrupt_id", flat=True)
    )
    again = read_decided(previous, payload) if pending else None
    if again is None or not is_repeat(
        previous, decided_by=actor, decision=again.decision, payload=again.payload, reason=again.reason
    ):
        return None
    refusal = decided_refusal(previous)
    assert refusal is not None  # resolved
    return ApiError(
        409,
        "interrupt_decided",
        f"{refusal.message.removesuffix('; nothing was recorded.')}, with this same answer; nothing was "
        "recorded. A newer request of the session is pending: name it (interrupt_id) to answer it.",
        **refusal.details,
        pending=pending,
    )


def _check_policy(row: Item, decision: str) -> None:
    """Refuse an approval an approval policy leaves to two people in the inbox (``inbox.policy_gate``)."""
    if client_gate(item=row, decision=decision) == "four_eyes":
        raise ApiError(
            409,
            "four_eyes_required",
            "This request needs the approvals of two different people in the inbox; nothing was recorded.",
            interrupt_id=row.interrupt_id,
        )


def _superseded(session: WorkflowSession, interrupt_id: str) -> ApiError | None:
    """409 ``interrupt_superseded`` when a newer request of the session replaced ``interrupt_id``."""
    row = Item.objects.filter(session=session, interrupt_id=interrupt_id).first()
    newer = newer_request(row) if row is not None else None
    if newer is None:
        return None
    return ApiError(
        409,
        "interrupt_superseded",
        "superseded: a newer request exists; answer that one instead.",
        interrupt_id=interrupt_id,
        newer_interrupt_id=newer.interrupt_id,
        url=f"/api/v1/sessions/{session.id}",
    )


def _cancelled(decided: Interrupt | None) -> CancelledError | None:
    """409 ``interrupt_cancelled`` when its client, AG-UI's or a queue manager cancelled ``decided``
    (who, when, the reason: ``inbox.items.refusals.cancelled_conflict``)."""
    item = Item.objects.filter(session_interrupt=decided).first() if decided is not None else None
    refused = refusal_for(item) if item is not None else None
    return refused if isinstance(refused, CancelledError) else None


def api_session_cancel(*, client: ApiClient, session: WorkflowSession, reason: str, request: HttpRequest) -> str:
    """Cancel ``session``: pending interrupts are cancelled and nothing runs again; their inbox
    items are marked cancelled by ``client:<name>`` with ``reason`` (a reviewer deciding one then
    gets 409 ``cancelled`` saying so). Returns the status.

    Raises:
        engine.SessionClosedError: already completed, failed or cancelled (409).
        engine.SessionBusyError: a run holds the session right now, or a decision on it is stored
            and not yet applied by its run (409, retry).
        UnknownWorkflowError: the workflow is no longer registered (409).
    """
    before = session.status
    pending = pending_item_ids(session.id)
    record = session_cancel_sync(session, reason=cancel_reason(_actor(client), reason))
    session_items_cancelled(pending, by=_actor(client), reason=reason)  # "cancelled by client:<name>"
    audit_record(
        action="session.cancel",
        actor=_actor(client),
        target=session,
        request=request,
        before={"status": before},
        after={"status": record.status},
        detail={"reason": reason},
    )
    return str(record.status)
