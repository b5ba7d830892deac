"""One reading of a raw answer (API payload, AG-UI ``resolved`` payload) to an inbox item.

:func:`read_answer` classifies the answer once, refuses what it cannot read, and returns the
decision it stands for with the normalised payload to store: for free-text and yes/no requests,
exactly what the inbox sends for that decision (``inbox.items.decisions.resume_payload``), read with the
same functions the workflows use (``reviewconsole.workflows.answers``). Tool confirmations
(``{"confirmed": bool, "args_digest"?: str, "args"?: {…}, "payload"?: …}``) are read by the
engine's own reading (edited ``args`` get their diff, as in the inbox); long-running
results (``{"status": "approved" | "rejected", "reason"?: …}`` or an interim update) and answers
to a ``response_schema`` pass as sent (the engine validates them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import AnswerInvalidError, InterruptKind, is_cancelled_answer, normalize_answer

from ...workflow_sessions.models import Interrupt
from ...workflows.answers import REVIEW_SHAPES, AmbiguousAnswerError, AnswerShapeError, Decision, read_review
from ..errors import (
    AnswerMissingError,
    AnswerShapeInvalidError,
    AnswerTooLongError,
    DecisionAmbiguousError,
    DecisionError,
)
from ..models import Item
from ..pages.drafts import draft_of, edit_diff
from .actions import MAX_LENGTHS, REQUEST_KINDS, can_edit_draft, check_action, check_lengths, request_kind
from .decisions import args_diff, resume_payload

__all__ = ["Answer", "read_answer", "read_decided"]

CONFIRMATION_SHAPES = (
    '{"confirmed": true|false} (optionally with "args_digest", edited "args" and "payload"), true/false, "yes"/"no"'
)


@dataclass(frozen=True)
class Answer:
    """A read answer: ``decision`` (approve, reject, revise or answer), the ``payload`` to store,
    and what the inbox stores beside it (a rejection's ``reason``, an edited draft's ``edit_diff``)."""

    decision: str
    payload: Any
    reason: str = ""
    edit_diff: str = ""


def _texts(value: Any) -> int:
    if isinstance(value, str):
        return len(value.replace("\r\n", "\n"))
    if isinstance(value, dict):
        return sum(_texts(k) + _texts(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_texts(v) for v in value)
    return 0


def _check_total(value: Any) -> None:
    if _texts(value) > MAX_LENGTHS["answer"]:
        raise AnswerTooLongError("answer", MAX_LENGTHS["answer"])


def read_answer(item: Item, value: Any) -> Answer:
    """The decision a raw answer to ``item`` stands for, and the payload to store for it.

    Raises:
        AnswerShapeInvalidError: a shape the request does not accept (400 ``answer_invalid``, naming them).
        DecisionAmbiguousError: feedback beside an approval, a rejection or an edited draft (400
            ``decision_ambiguous``; ``errors`` name the payload's keys in conflict).
        AnswerTooLongError: feedback, a reason, a draft or any other answer over :data:`MAX_LENGTHS`.
        AnswerMissingError: a free-text answer with nothing in it (``None``, blank): 400 ``answer_missing``.
        ActionNotSupportedError: a decision the request kind does not support (feedback to a VIP
            confirmation): 400 ``action_not_supported``.
    """
    if item.kind == InterruptKind.INPUT and is_cancelled_answer(value):
        # The console's own answer for a cancelled request (it skips the schema): cancelling is
        # its own action (inbox/items/lifecycle.py), never an answer from outside.
        raise AnswerShapeInvalidError("an answer to the request (to cancel it, use its cancel action)")
    if item.kind == InterruptKind.INPUT and item.response_schema:
        _check_total(value)
        return Answer("answer", value)
    if item.kind == InterruptKind.CONFIRMATION:
        return _confirmation(item, value)
    if item.kind == InterruptKind.LONG_RUNNING:
        return _long_running(item, value)
    registered = REQUEST_KINDS.get(request_kind(item))
    reader = registered.read_answer if registered else read_review
    try:
        decision = reader(value)
    except AmbiguousAnswerError as exc:
        raise DecisionAmbiguousError(
            "The answer is ambiguous: it says two decisions at once "
            f"({' and '.join(repr(key) for key, _ in exc.keys)}); send one. Nothing was recorded.",
            decision=exc.decision,
            conflicts=[(["payload", key], text) for key, text in exc.keys],
        ) from None
    except AnswerShapeError as exc:
        raise AnswerShapeInvalidError(exc.shapes) from None
    if decision is None:
        raise AnswerMissingError()
    if decision.timeout:  # the console's own answer for an expired item
        raise AnswerShapeInvalidError(REVIEW_SHAPES)
    check_action(item, decision.action)
    return _normalised(item, decision)


def _normalised(item: Item, decision: Decision) -> Answer:
    """The inbox's payload for ``decision`` (``inbox.items.decisions``: same lengths, same edit rules)."""
    text = decision.text.replace("\r\n", "\n").strip()
    reason = decision.reason.replace("\r\n", "\n").strip()
    check_lengths(feedback=text if decision.action == "revise" else None, reason=reason)
    edited, diff = None, ""
    if decision.draft is not None:
        if not can_edit_draft(item):
            raise AnswerShapeInvalidError('"approve", "reject" or {"result": "approve" | "reject"}')
        candidate = decision.draft.replace("\r\n", "\n").strip("\n")
        check_lengths(draft=candidate)
        original = draft_of(item)
        if original is None or candidate != original.strip("\n"):
            edited = candidate
            diff = edit_diff(original, candidate) if original is not None else ""
    payload = resume_payload(item, decision.action, text, reason=reason, draft=edited)
    return Answer(decision.action, payload, reason=reason, edit_diff=diff)


def _confirmation(item: Item, value: Any) -> Answer:
    try:
        normalised = normalize_answer(InterruptKind.CONFIRMATION, value, None)
    except AnswerInvalidError:
        raise AnswerShapeInvalidError(CONFIRMATION_SHAPES) from None
    _check_total(normalised)
    decision = "approve" if normalised.get("confirmed") is True else "reject"
    check_action(item, decision)
    edited = normalised.get("args") if decision == "approve" else None
    return Answer(decision, normalised, edit_diff=args_diff(item, edited) if edited is not None else "")


LONG_RUNNING_SHAPES = '{"status": "approved"} or {"status": "rejected", "reason": "<text>"}'
"""What a long-running approval of a known request kind (``REQUEST_KINDS``) accepts."""


def _long_running(item: Item, value: Any) -> Answer:
    _check_total(value)
    status = value.get("status") if isinstance(value, dict) else None
    reason = value.get("reason") if isinstance(value, dict) else None
    if isinstance(reason, str):
        check_lengths(reason=reason)
    decision = {"approved": "approve", "rejected": "reject"}.get(status) if isinstance(status, str) else None
    if decision is None:
        if request_kind(item) in REQUEST_KINDS:
            # An approval the console knows (a refund): its tool reads anything but "approved" as
            # a refusal, so "approve", a typo or free text would end it rejected, recorded as "answer".
            raise AnswerShapeInvalidError(LONG_RUNNING_SHAPES)
        return Answer("answer", value)  # another tool's own result: the tool reads it
    check_action(item, decision)
    return Answer(decision, value, reason=reason.strip() if isinstance(reason, str) else "")


def read_decided(row: Interrupt | None, payload: Any) -> Answer | None:
    """What ``payload`` stands for on the item of ``row``, a session interrupt already decided
    (:func:`read_answer`: the decision, the payload to store, the reason), to tell the same answer
    sent again from another; None when it has no item, or the payload is no answer it could take."""
    if row is None:
        return None
    item = Item.objects.filter(session_interrupt=row).select_related("session", "queue").first()
    if item is None:
        return None
    try:
        return read_answer(item, payload)
    except (DecisionError, AnswerInvalidError):
        return None
