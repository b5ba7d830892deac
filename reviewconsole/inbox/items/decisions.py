"""Deciding an interrupt: the reviewer's action becomes a resume payload, stored once, then run.

Free-text interrupts (the email review) resume with ``{"result": "approve" | "reject" | feedback}``
(an edited draft: ``{"result": "approve", "draft": "<edited>"}``); tool confirmations with
``{"confirmed": true | false}``; long-running tools with ``{"status": "approved" | "rejected"}``
(plus the rejection's ``reason``); interrupts with a ``response_schema`` with the generated
form's value, validated against the schema (DESIGN.md, resume payloads).

Who may decide: a reviewer or manager of the item's queue; when someone else holds an unexpired
claim, only a queue manager. The store's conditional UPDATE re-checks the queue, claim and due
time (and that nobody deferred the item since the reviewer loaded it), so the first decision wins
even against a claim, a move, a defer or an expiry landing at the same moment.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest

from engine import AlreadyDecidedError, Decision, InterruptKind

from ...audit.services import audit_record
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync
from ..errors import DecisionError
from ..models import Item
from ..pages.drafts import draft_of, edit_diff
from ..pages.schema_form import validate_value
from .actions import ACTIONS, check_action, check_lengths, reject_reason_required
from .answer_guard import InboxGuard
from .refusals import claimed_conflict, expired_conflict, moved_conflict, refusal_for
from .selectors import is_queue_manager, queues_for

__all__ = [
    "ACTIONS",
    "DecisionError",
    "interrupt_decide",
    "resume_payload",
]


def resume_payload(
    interrupt: Item, action: str, text: str = "", *, reason: str = "", draft: str | None = None, value: Any = None
) -> dict[str, Any]:
    """The function response for ``action`` on ``interrupt``.

    ``text`` is the feedback of ``revise``; ``reason`` a rejection's reason (sent to long-running
    tools, stored for every kind); ``draft`` an edited draft approved instead of the agent's;
    ``value`` the generated form's answer for ``answer``.

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
        return {"confirmed": action == "approve"}
    if interrupt.kind == InterruptKind.LONG_RUNNING:
        if action == "revise":
            raise DecisionError("This request can only be approved or rejected.")
        if action == "approve":
            return {"status": "approved"}
        return {"status": "rejected", "reason": reason} if reason else {"status": "rejected"}
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


def _check_action(interrupt: Item, action: str, reason: str) -> None:
    check_action(interrupt, action)
    if action == "reject" and reject_reason_required(interrupt) and not reason.strip():
        raise DecisionError("Give a reason for the rejection.")


def interrupt_decide(
    *,
    interrupt: Item,
    user: AbstractBaseUser,
    action: str,
    text: str = "",
    reason: str = "",
    draft: str | None = None,
    form: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
) -> Item:
    """Store ``user``'s decision on ``interrupt``, audit it, and queue the resume run.

    ``draft``: the draft as the reviewer approves it (edit before approve); when it differs
    from the agent's, the workflow receives it and the diff is stored with the decision.
    ``form``: the generated form's raw fields for ``answer`` (see ``schema_form``).

    Raises:
        PermissionDenied: the user is not a reviewer or manager of the interrupt's queue.
        DecisionError: the decision is incomplete or not allowed here (``errors`` for forms).
        engine.AlreadyDecidedError: someone decided first; the message says who, what and when.
        ClaimConflictError / ExpiredError / SupersededError / DeferredError: the item's state
            refuses it (409).
        engine.AnswerInvalidError: the answer fails the interrupt's schema.
    """
    text, reason = text.replace("\r\n", "\n"), reason.replace("\r\n", "\n")  # a line break counts once
    override = _check_may_decide(interrupt, user)
    _check_action(interrupt, action, reason)
    check_lengths(feedback=text if action == "revise" else None, reason=reason, draft=draft)
    value = None
    if action == "answer":
        value = validate_value(interrupt.response_schema or {}, form or {})
    original = draft_of(interrupt)
    edited = None
    diff = ""
    if action == "approve" and draft is not None and original is not None:
        candidate = draft.replace("\r\n", "\n").strip("\n")
        if candidate.strip() and candidate != original.strip("\n"):
            edited, diff = candidate, edit_diff(original, candidate)
    payload = resume_payload(interrupt, action, text, reason=reason.strip(), draft=edited, value=value)
    decision = Decision(kind=action, reason=reason.strip(), edit_diff=diff, user_id=user.pk)
    try:
        with transaction.atomic():
            interrupt_answer_sync(
                interrupt.session,
                {interrupt.interrupt_id: payload},
                decided_by=user.get_username(),
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
                detail={"reason": reason.strip(), "edit_diff": diff, "queue": interrupt.queue.slug},
            )
            enqueue_run(interrupt.session_id)
    except AlreadyDecidedError:
        # The engine's message depends on where the race was lost (its pending check or the
        # store's conditional update); say it the same way every time, from the stored row.
        raise _conflict_now(interrupt) from None
    interrupt.refresh_from_db()
    return interrupt


def _conflict_now(interrupt: Item) -> Exception:
    """The conflict for a decision that came too late, from the row as stored now."""
    interrupt.refresh_from_db()
    return refusal_for(interrupt) or AlreadyDecidedError(f"This request was already {interrupt.status}.")
