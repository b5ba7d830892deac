"""One reading of a reviewer's answer to a free-text or yes/no request, for the doors and the workflows.

The doors (inbox, API, AG-UI) classify a raw answer with these readers, refuse what they cannot
read, and store the normalised answer the inbox would send (``{"result": "approve"}``,
``{"result": "approve", "draft": "<edited>"}``, ``{"result": "reject"}``, ``{"result": "<feedback>"}``);
the demo workflows read what they receive with the same functions, so both agree on the decision.

Accepted free-text shapes (:func:`read_review`):

- a string: ``"approve"``, ``"reject"`` (any case, surrounding blanks ignored), else feedback;
- ``{"result": <string>}``: the same;
- ``{"result": "approve", "draft": "<non-blank edited draft>"}``;
- ``{"result": "reject", "reason": "<string>"}``.

An object that says two decisions at once is refused as ambiguous (:class:`AmbiguousAnswerError`,
naming the keys in conflict) rather than read as one of them: non-blank ``"feedback"`` beside an
approval or a rejection (``{"result": "approve", "feedback": "…"}``), or feedback text as the
``result`` beside an edited ``"draft"``.

Accepted yes/no shapes (:func:`read_yes_no`): a boolean, a yes/no word (:data:`YES`, :data:`NO`), or
a one-key object ``{"result" | "confirmed" | "approved" | "text": <boolean or yes/no word>}``, or
``{"result": <no word>, "reason": "<string>"}``. Text that is neither yes nor no reads as ``revise``.

``{"timeout": true}`` is what the console sends when nobody answered in time: it reads as a
rejection with ``timeout`` set (the doors refuse it from outsiders).

``{"cancelled": true, "reason"?: <text>}`` (``{"confirmed": false, "cancelled": true, …}`` for a
confirmation; ``engine.cancelled_answer``) is what the console sends when a queue manager cancels
the request (ADK 2.11's synthesized abort response, AG-UI 1.0's ``status: "cancelled"``): it reads
as a rejection with ``cancelled`` set and the manager's ``reason``; a workflow routes on
``decision.cancelled`` (the email review ends "Draft cancelled."). The doors refuse it as an answer
from outsiders: cancelling is its own action (``inbox/items/lifecycle.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import is_cancelled_answer

__all__ = ["NO", "YES", "AmbiguousAnswerError", "AnswerShapeError", "Decision", "read_review", "read_yes_no"]

YES = frozenset({"yes", "y", "true", "approve", "approved", "confirm", "confirmed"})
NO = frozenset({"no", "n", "false", "reject", "rejected", "decline", "declined", "deny", "denied"})

REVIEW_SHAPES = (
    '"approve", "reject" or feedback text; {"result": <text>}; '
    '{"result": "approve", "draft": <edited draft>}; {"result": "reject", "reason": <text>}'
)
YES_NO_SHAPES = (
    'true/false; "yes"/"no" (or approve/reject); {"result"|"confirmed"|"approved"|"text": <one of those>}; '
    '{"result": "reject", "reason": <text>}'
)


class AnswerShapeError(ValueError):
    """The answer has none of the accepted shapes; ``shapes`` names them."""

    def __init__(self, shapes: str) -> None:
        super().__init__(f"The answer has none of the accepted shapes: {shapes}.")
        self.shapes = shapes


class AmbiguousAnswerError(AnswerShapeError):
    """The answer says two decisions at once; ``keys`` are the keys in conflict, each with why
    (``[(key, message), …]``), and ``decision`` the one its ``result`` says."""

    def __init__(self, decision: str, keys: list[tuple[str, str]]) -> None:
        super().__init__(REVIEW_SHAPES)
        self.decision = decision
        self.keys = keys


def _refuse_ambiguous(value: dict[str, Any]) -> None:
    """Raise :class:`AmbiguousAnswerError` for feedback beside another decision (module docstring)."""
    if not set(value) <= {"result", "draft", "reason", "feedback"}:
        return  # another shape altogether: refused as such
    result, feedback, draft = value.get("result"), value.get("feedback"), value.get("draft")
    verdict = result.strip().lower() if isinstance(result, str) else ""
    if isinstance(feedback, str) and feedback.strip() and verdict in ("approve", "reject"):
        raise AmbiguousAnswerError(
            verdict,
            [
                ("feedback", f"Feedback goes alone (as the result): it asks for a new draft, not to {verdict}."),
                ("result", f'"{verdict}" sends no feedback: leave the feedback out to {verdict}.'),
            ],
        )
    if isinstance(draft, str) and draft.strip() and verdict and verdict not in ("approve", "reject"):
        raise AmbiguousAnswerError(
            "revise",
            [
                ("result", 'Feedback asks for a new draft: send "approve" to approve the edited draft.'),
                ("draft", "An edited draft is approved as it stands: leave it out to send feedback."),
            ],
        )


@dataclass(frozen=True)
class Decision:
    """What an answer decides: ``action`` is ``approve``, ``reject`` or ``revise``.

    ``text``: the feedback of ``revise``; ``draft``: an edited draft approved instead of the agent's;
    ``reason``: a rejection's (or a cancel's) reason; ``timeout``: the console's own answer for an
    expired item; ``cancelled``: the console's own answer for a request a manager cancelled."""

    action: str
    text: str = ""
    draft: str | None = None
    reason: str = ""
    timeout: bool = False
    cancelled: bool = False


def _is_timeout(value: Any) -> bool:
    return isinstance(value, dict) and value == {"timeout": True}


def _cancelled(value: Any) -> Decision | None:
    if not is_cancelled_answer(value):
        return None
    return Decision("reject", reason=str(value.get("reason", "")).strip(), cancelled=True)


def _reason(value: dict[str, Any], shapes: str) -> str:
    reason = value.get("reason", "")
    if not isinstance(reason, str):
        raise AnswerShapeError(shapes)
    return reason.strip()


def read_review(value: Any) -> Decision | None:
    """Read a free-text review answer (shapes in the module docstring); None when nothing was said.

    Raises:
        AmbiguousAnswerError: feedback beside an approval, a rejection or an edited draft.
        AnswerShapeError: any other shape (unknown keys, non-string values, booleans, a draft
            with a rejection, a reason with an approval, a blank draft).
    """
    if _is_timeout(value):
        return Decision("reject", timeout=True)
    if (cancel := _cancelled(value)) is not None:
        return cancel
    if isinstance(value, dict):
        _refuse_ambiguous(value)
        keys = set(value)
        if "result" not in keys or not keys <= {"result", "draft", "reason"} or len(keys) > 2:
            raise AnswerShapeError(REVIEW_SHAPES)
        result = value["result"]
        if keys == {"result"}:
            if result is not None and not isinstance(result, str):
                raise AnswerShapeError(REVIEW_SHAPES)
            return read_review(result)
        verdict = result.strip().lower() if isinstance(result, str) else None
        if "draft" in keys:
            draft = value["draft"]
            if verdict != "approve" or not isinstance(draft, str) or not draft.strip():
                raise AnswerShapeError(REVIEW_SHAPES)
            return Decision("approve", draft=draft)
        if verdict != "reject":
            raise AnswerShapeError(REVIEW_SHAPES)
        return Decision("reject", reason=_reason(value, REVIEW_SHAPES))
    if value is None:
        return None
    if not isinstance(value, str):
        raise AnswerShapeError(REVIEW_SHAPES)
    text = value.strip()
    if not text:
        return None
    if text.lower() in ("approve", "reject"):
        return Decision(text.lower())
    return Decision("revise", text=text)


def read_yes_no(value: Any) -> Decision | None:
    """Read a yes/no answer (shapes in the module docstring); None when nothing was said.

    Raises:
        AnswerShapeError: any other shape (several keys such as ``confirmed`` with ``text``,
            unknown keys, values that are neither a boolean nor text).
    """
    if _is_timeout(value):
        return Decision("reject", timeout=True)
    if (cancel := _cancelled(value)) is not None:
        return cancel
    if isinstance(value, dict):
        keys = set(value)
        if keys == {"result", "reason"}:
            inner = value["result"]
            if not isinstance(inner, str) or inner.strip().lower() not in NO:
                raise AnswerShapeError(YES_NO_SHAPES)
            return Decision("reject", reason=_reason(value, YES_NO_SHAPES))
        if len(keys) != 1 or not keys <= {"result", "confirmed", "approved", "text"}:
            raise AnswerShapeError(YES_NO_SHAPES)
        value = next(iter(value.values()))
        if isinstance(value, dict):
            raise AnswerShapeError(YES_NO_SHAPES)
    if isinstance(value, bool):
        return Decision("approve" if value else "reject")
    if value is None:
        return None
    if not isinstance(value, str):
        raise AnswerShapeError(YES_NO_SHAPES)
    text = value.strip()
    if not text:
        return None
    word = text.lower()
    return Decision("approve") if word in YES else Decision("reject") if word in NO else Decision("revise", text=text)
