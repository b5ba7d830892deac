"""Deciding an interrupt: the reviewer's action becomes a resume payload, stored once, then run.

Free-text interrupts (the email review) resume with ``{"result": "approve" | "reject" | feedback}``
(an edited draft: ``{"result": "approve", "draft": "<edited>"}``); tool confirmations with
``{"confirmed": true | false}`` (plus the ``args_digest`` the page showed, and edited ``args``
approved instead of the model's); long-running tools with ``{"status": "approved" | "rejected"}``
(plus the rejection's ``reason`` and the ``args_digest``); interrupts with a ``response_schema``
with the generated form's value, validated against the schema (DESIGN.md, resume payloads).

Approvals are bound to the exact call (``engine._digest``): the page posts the interrupt id and
the digest of the arguments it showed; an id other than the item's is refused
(``interrupt_unknown``), a digest other than the stored one by the engine (``args_changed``). The
same decision sent again by the same reviewer is a no-op (``receipts.is_repeat``: the same action,
reason, feedback, edited draft, form answer and arguments), even when both copies race (a double
click: the one that loses finds the other's decision and answers with it); one that differs in
any of them is refused (409, who decided what).

Who may decide: a reviewer or manager of the item's queue; when someone else holds an unexpired
claim, only a queue manager. The store's conditional UPDATE re-checks the queue, claim and due
time (and that nobody deferred the item since the reviewer loaded it), so the first decision wins
even against a claim, a move, a defer or an expiry landing at the same moment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest

from engine import AlreadyDecidedError, Decision, InterruptKind, UnknownInterruptError

from ...audit.services import audit_record
from ...workflow_sessions.models import Interrupt, InterruptStatus
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync
from ..errors import DecisionError, DecisionRefusedError, InboxConflict
from ..models import Item
from ..pages.drafts import draft_of, edit_diff
from ..pages.schema_form import validate_value
from .actions import ACTIONS, check_action, check_lengths, reject_reason_required
from .ambiguity import check_unambiguous, draft_edit
from .answer_guard import InboxGuard
from .approvals import deciders, deciders_label
from .decision_checks import audit_refusal, check_before_decision
from .policy_gate import approval_gate, record_refused
from .receipts import is_repeat
from .refusals import claimed_conflict, expired_conflict, moved_conflict, refusal_for
from .selectors import ITEM_RELATED, is_queue_manager, queues_for
from .standing_grants import StandingRequest

__all__ = [
    "ACTIONS",
    "DecisionError",
    "args_diff",
    "editable_arguments",
    "edited_arguments",
    "interrupt_decide",
    "resume_payload",
]


def resume_payload(
    interrupt: Item,
    action: str,
    text: str = "",
    *,
    reason: str = "",
    draft: str | None = None,
    value: Any = None,
    args_digest: str = "",
    args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The function response for ``action`` on ``interrupt``.

    ``text`` is the feedback of ``revise``; ``reason`` a rejection's reason (sent to long-running
    tools, stored for every kind); ``draft`` an edited draft approved instead of the agent's;
    ``value`` the generated form's answer for ``answer``; ``args_digest`` the digest of the tool
    call's arguments as the reviewer saw them (confirmations and long-running tools); ``args``
    edited arguments an approval of a confirmation runs the tool with.

    Raises:
        DecisionError: unknown action, or ``revise`` without feedback.
    """
    if action not in ACTIONS:
        raise DecisionError(f"Unknown action {action!r}.")
    if action == "answer":
        return {"result": value}
    if interrupt.kind == InterruptKind.CONFIRMATION:
        if action == "revise":
            raise DecisionError("A tool call can only be approved or rejected.")
        bound = {"args_digest": args_digest} if args_digest else {}
        edited = {"args": args} if args is not None and action == "approve" else {}
        return {"confirmed": action == "approve", **bound, **edited}
    if interrupt.kind == InterruptKind.LONG_RUNNING:
        if action == "revise":
            raise DecisionError("This request can only be approved or rejected.")
        bound = {"args_digest": args_digest} if args_digest else {}
        if action == "approve":
            return {"status": "approved", **bound}
        return {"status": "rejected", "reason": reason, **bound} if reason else {"status": "rejected", **bound}
    if action == "revise":
        feedback = text.strip()
        if not feedback:
            raise DecisionError("Write the feedback the next draft should apply.")
        if feedback.lower() in ("approve", "reject"):
            raise DecisionError("Use the Approve or Reject buttons for that.")
        return {"result": feedback}
    if action == "approve" and draft is not None:
        return {"result": "approve", "draft": draft}
    return {"result": action}


def _check_may_decide(interrupt: Item, user: AbstractBaseUser) -> bool:
    """Raise unless ``user`` may decide now; return whether they may override a claim."""
    if not queues_for(user).filter(pk=interrupt.queue_id).exists():
        if interrupt.escalated_from_id and queues_for(user).filter(pk=interrupt.escalated_from_id).exists():
            # Escalated away from their queue: by its due time (expired), or by a reviewer (moved).
            raise expired_conflict(interrupt) if interrupt.expired_at else moved_conflict(interrupt)
        raise PermissionDenied("You are not a reviewer of this queue.")
    refusal = refusal_for(interrupt)
    if refusal is not None:
        raise refusal
    manager = is_queue_manager(user, interrupt.queue_id)
    holder = interrupt.claim_holder()
    if holder and holder != user.pk and not manager:
        raise claimed_conflict(interrupt)
    return manager


def interrupt_decide(
    *,
    interrupt: Item,
    user: AbstractBaseUser,
    action: str,
    text: str = "",
    reason: str = "",
    draft: str | None = None,
    form: dict[str, Any] | None = None,
    interrupt_id: str = "",
    args_digest: str = "",
    args: str | None = None,
    request: HttpRequest | None = None,
    standing: StandingRequest | None = None,
    door: str = "inbox",
) -> Item:
    """Store ``user``'s decision on ``interrupt``, audit it, and queue the resume run.

    ``text``: the feedback box; ``draft``: the draft box as posted (edit before approve); when it
    differs from the agent's, an approval sends it to the workflow and stores the diff with the
    decision. Feedback with another decision than ``revise``, or with an edited draft, is refused
    (``ambiguity.check_unambiguous``): nothing the reviewer wrote is dropped.
    ``form``: the generated form's raw fields for ``answer`` (see ``schema_form``).
    ``standing``: a standing approval to grant with this approval, in its transaction
    (``standing_grants.StandingRequest``). The person who started the session may not approve any
    of its requests, and under four eyes the first approval is stored and resumes nothing
    (``policy_gate.approval_gate``); the second decides it in both approvers' names
    (``approvals.deciders``: the decision's ``decided_by`` label "ana and bob", the audit entry's
    ``approvers``). A decision on an item a policy decided is refused and
    recorded (``interrupt.decide_refused``). ``door``: ``inbox`` or ``bulk``, for the workflow's
    checks (``decision_checks``), which run last before anything is stored.
    ``interrupt_id`` and ``args_digest``: the request and the arguments' digest the page showed
    (checked when given); ``args``: a confirmation's edited arguments as JSON text (an object,
    checked against the tool's parameters by the engine; the diff is stored with the decision).
    The same decision sent again by the same user (the same action, reason, feedback, edited
    draft, form answer and arguments: ``receipts.is_repeat``) returns the item unchanged, nothing
    stored, also when it lost the race to its own first copy (a double click); a decision that
    differs in any of them is refused like any other second decision.
    Returns ``interrupt``, read again from the database.

    Raises:
        PermissionDenied: the user is not a reviewer or manager of the interrupt's queue, or
            started the item's session and approves.
        FourEyesError: under four eyes, the user gave the first approval already (409).
        DecisionError: the decision is incomplete or not allowed here (``errors`` for forms).
        DecisionAmbiguousError: its fields contradict each other (400 ``decision_ambiguous``).
        DecisionRefusedError: a check of the workflow refused it (400 ``decision_refused``;
            audited as ``interrupt.decide_refused``).
        engine.AlreadyDecidedError: someone decided first; the message says who, what and when.
        ClaimConflictError / ExpiredError / SupersededError / DeferredError: the item's state
            refuses it (409).
        engine.AnswerInvalidError: the answer (or edited arguments) fails its schema.
        engine.UnknownInterruptError: ``interrupt_id`` is not the item's (a forged id; 409).
        engine.ArgsChangedError: ``args_digest`` is not the stored one: the call changed (409).
    """
    text, reason = text.replace("\r\n", "\n"), reason.replace("\r\n", "\n")  # a line break counts once
    if interrupt_id and interrupt_id != interrupt.interrupt_id:
        raise UnknownInterruptError("This decision names a request the console did not issue; nothing was recorded.")
    edited_args, args_diff = edited_arguments(interrupt, action, args)
    sent = _Sent(action=action, text=text, reason=reason, draft=draft, form=form, args_digest=args_digest)

    def repeated(stored: Interrupt | None = None) -> bool:
        """Whether the decision stored now (``stored``: the session interrupt as just read, else
        read again) is this one (then the item as stored now is the answer)."""
        if not _is_repeat(interrupt, user, sent, edited_args, stored):
            return False
        _refresh(interrupt)  # as every return: the item as stored now
        return True

    if repeated(interrupt.session_interrupt):  # read with the item (``selectors.item_for``)
        return interrupt  # the same decision again: its receipt stands, nothing is stored or run
    try:
        override = _check_may_decide(interrupt, user)
    except (AlreadyDecidedError, InboxConflict) as exc:
        if repeated():  # decided meanwhile by this very decision (a double click's other half)
            return interrupt
        if isinstance(exc, AlreadyDecidedError):
            record_refused(interrupt.session_id, interrupt.interrupt_id, decision=action, user=user, request=request)
        raise
    check_action(interrupt, action)
    edited = draft_edit(interrupt, draft, action)
    check_unambiguous(interrupt, action=action, feedback=text, edited=edited)
    if action == "reject" and reject_reason_required(interrupt) and not reason.strip():
        raise DecisionError("Give a reason for the rejection.")
    check_lengths(feedback=text if action == "revise" else None, reason=reason, draft=draft)
    if standing is not None:
        if edited_args is not None:
            raise DecisionError(
                "A standing approval covers calls as the model makes them: approve the edited call without one."
            )
        standing.check(interrupt, action)
    value = None
    if action == "answer":
        value = validate_value(interrupt.response_schema or {}, form or {})
    approved = edited if action == "approve" else None  # a rejection's edit is moot (ambiguity.py)
    diff = edit_diff(draft_of(interrupt) or "", approved) if approved is not None else ""
    payload = resume_payload(
        interrupt,
        action,
        text,
        reason=reason.strip(),
        draft=approved,
        value=value,
        args_digest=args_digest,
        args=edited_args,
    )
    try:
        check_before_decision(
            interrupt, decision=action, reason=reason, response=payload, decided_by=user.get_username(), door=door
        )
    except DecisionRefusedError as exc:
        audit_refusal(exc, user=user, request=request)
        raise
    if approval_gate(item=interrupt, user=user, action=action, reason=reason.strip(), request=request):
        interrupt.refresh_from_db()
        return interrupt  # the first of two approvals: recorded, nothing answered yet
    approvers = deciders(interrupt, user, action)  # under four eyes: the first approver, then this one
    decision = Decision(kind=action, reason=reason.strip(), edit_diff=diff or args_diff, user_id=user.pk)
    try:
        with transaction.atomic():
            interrupt_answer_sync(
                interrupt.session,
                {interrupt.interrupt_id: payload},
                decided_by=deciders_label(approvers),
                decisions={interrupt.interrupt_id: decision},
                guard=InboxGuard(
                    user_id=user.pk,
                    queue_id=interrupt.queue_id,
                    override_claim=override,
                    check_deferral=True,
                    deferral_seen=interrupt.deferred_until,
                ),
            )
            audit_record(
                action="interrupt.decide",
                user=user,
                target=interrupt,
                request=request,
                after={"decision": action, "response": payload},
                detail={
                    "reason": reason.strip(),
                    "edit_diff": decision.edit_diff,
                    "queue": interrupt.queue.slug,
                    **({"approvers": approvers} if len(approvers) > 1 else {}),
                },
            )
            if standing is not None:
                standing.grant(interrupt, user, request)
            enqueue_run(interrupt.session_id)
    except AlreadyDecidedError:
        if repeated():  # the same decision won the race (a double click): its receipt stands
            return interrupt
        record_refused(interrupt.session_id, interrupt.interrupt_id, decision=action, user=user, request=request)
        # The engine's message depends on where the race was lost (its pending check or the
        # store's conditional update); say it the same way every time, from the stored row.
        raise _conflict_now(interrupt) from None
    _refresh(interrupt)
    return interrupt


def _refresh(item: Item) -> None:
    """``item`` as stored now, the rows its page reads beside it too (one query)."""
    item.refresh_from_db(from_queryset=Item.objects.select_related(*ITEM_RELATED))


@dataclass(frozen=True, slots=True)
class _Sent:
    """A decision as a door sent it (``interrupt_decide``'s arguments, line breaks normalised)."""

    action: str
    text: str
    reason: str
    draft: str | None
    form: dict[str, Any] | None
    args_digest: str


def _is_repeat(
    interrupt: Item,
    user: AbstractBaseUser,
    sent: _Sent,
    edited_args: dict[str, Any] | None,
    stored: Interrupt | None = None,
) -> bool:
    """Whether ``interrupt``'s session interrupt (``stored``, else read now) was decided by ``user``
    with exactly ``sent``: the same action, reason, feedback, edited draft, form answer and
    arguments (``receipts.is_repeat``). A decision that cannot be read (an invalid form) is no repeat."""
    row = stored or Interrupt.objects.filter(pk=interrupt.session_interrupt_id).first()
    if row is None or row.status != InterruptStatus.RESOLVED:
        return False
    try:
        value = validate_value(interrupt.response_schema or {}, sent.form or {}) if sent.action == "answer" else None
        payload = resume_payload(
            interrupt,
            sent.action,
            sent.text,
            reason=sent.reason.strip(),
            draft=draft_edit(interrupt, sent.draft, sent.action) if sent.action == "approve" else None,
            value=value,
            args_digest=sent.args_digest,
            args=edited_args,
        )
    except DecisionError:
        return False
    decided_by = deciders_label(deciders(interrupt, user, sent.action))  # four eyes: both approvers
    return is_repeat(row, decided_by=decided_by, decision=sent.action, payload=payload, reason=sent.reason.strip())


def edited_arguments(interrupt: Item, action: str, args: str | None) -> tuple[dict[str, Any] | None, str]:
    """A confirmation's edited arguments (JSON text) as an object, and their diff against the
    model's; ``(None, "")`` when none were sent, they are unchanged, or ``action`` is not an approval.

    Raises:
        DecisionError: the item is no tool call's confirmation, or the text is not a JSON object.
    """
    if args is None or action != "approve":
        return None, ""
    if not editable_arguments(interrupt):
        raise DecisionError("Only an approval of a tool call takes edited arguments.")
    assert isinstance(interrupt.payload, dict)
    try:
        edited = json.loads(args, parse_constant=_not_finite, parse_float=_finite)
    except (ValueError, RecursionError):  # not JSON, NaN / Infinity / 1e999, or nested past recursion
        edited = None
    if not isinstance(edited, dict):
        raise DecisionError('The edited arguments must be a JSON object, e.g. {"amount": 40}.')
    diff = args_diff(interrupt, edited)
    return (edited, diff) if diff else (None, "")


def _not_finite(text: str) -> float:
    raise ValueError(f"{text} is not a finite number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is not a finite number")
    return value


def args_diff(interrupt: Item, edited: Any) -> str:
    """The unified diff of a confirmation's edited arguments against the model's (pretty JSON),
    ``""`` when they are the same."""
    original = interrupt.payload.get("args") if isinstance(interrupt.payload, dict) else None
    return "" if edited == original else edit_diff(_pretty(original), _pretty(edited))


def editable_arguments(interrupt: Item) -> str:
    """The model's arguments as the page's "edit arguments" box shows them (pretty JSON), or
    ``""`` when the item is no tool call's confirmation with a parameter schema to check edits."""
    payload = interrupt.payload
    if interrupt.kind != InterruptKind.CONFIRMATION or not isinstance(payload, dict) or "args" not in payload:
        return ""
    return _pretty(payload["args"]) if "args_schema" in (interrupt.metadata or {}) else ""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _conflict_now(interrupt: Item) -> Exception:
    """The conflict for a decision that came too late, from the row as stored now."""
    interrupt.refresh_from_db()
    return refusal_for(interrupt) or AlreadyDecidedError(f"This request was already {interrupt.status}.")
