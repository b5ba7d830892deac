"""The review JSON of the API as dataclasses, and the outcome an agent acts on.

:class:`Review` mirrors the review JSON that ``POST /api/v1/reviews``, ``GET /api/v1/reviews/{id}``,
``POST …/cancel`` and the ``data`` of a ``review.decided`` event carry (``docs/reviews.md`` in the
reviewconsole repository). Fields the console adds later land in :attr:`Review.extra`, so an older
client keeps working against a newer console.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["FINAL_STATUSES", "Cancellation", "Decision", "Review", "outcome"]

#: Statuses after which a review never changes again (``pending`` is the only other one).
FINAL_STATUSES: Final = frozenset({"decided", "cancelled", "expired", "superseded"})

#: What each decision's ``action`` means to an agent: the ``status`` of :func:`outcome`.
_ACTION_OUTCOMES: Final = {
    "approve": "approved",
    "reject": "rejected",
    "revise": "revise",
    "answer": "answered",
    "timeout": "expired",
}


def _split(cls: type, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    return {k: v for k, v in data.items() if k in names}, {k: v for k, v in data.items() if k not in names}


@dataclass(frozen=True)
class Decision:
    """A reviewer's (or the API's) decision of a review.

    ``action`` is one of ``approve``, ``reject``, ``revise``, ``answer`` (a form's value) or
    ``timeout`` (the review expired with ``on_expiry="timeout"``); ``answer`` is JSON (the form's
    value, the edited draft, or ``None``); ``by`` a reviewer's username, ``"client:<name>"`` (an
    API client answered), ``"system (expired)"`` or ``None``; ``at`` an ISO 8601 UTC timestamp.
    """

    action: str
    answer: Any = None
    reason: str | None = None
    feedback: str | None = None
    edits: dict[str, Any] | None = None
    by: str | None = None
    at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)


@dataclass(frozen=True)
class Cancellation:
    """Who cancelled a review (``by``: ``"client:<name>"`` its own client, a queue manager's
    username, or ``"system"``), when (``at``, ISO 8601 UTC) and why (``reason``)."""

    by: str | None = None
    at: str | None = None
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cancellation:
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)


@dataclass(frozen=True)
class Review:
    """One review request as the API shows it.

    ``status`` is ``pending``, ``decided``, ``cancelled``, ``expired`` or ``superseded``;
    ``decision`` is set once decided, ``cancelled`` once cancelled. Timestamps are ISO 8601 UTC
    strings as the API sent them. ``url`` is the review in the API, ``inbox_url`` its page in the
    inbox (``None`` until its item exists, a moment after ``ask``). Anything else the console sent
    is kept in ``extra``.
    """

    id: str
    status: str
    title: str = ""
    message: str = ""
    queue: str = ""
    kind: str = ""
    payload: Any = None
    response_schema: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    due_at: str | None = None
    revision_of: str | None = None
    superseded_by: str | None = None
    url: str = ""
    inbox_url: str | None = None
    session_id: str | None = None
    decision: Decision | None = None
    cancelled: Cancellation | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Review:
        """Build from the review JSON (a ``dict``); raises ``KeyError`` without ``id`` or ``status``."""
        known, extra = _split(cls, data)
        if known.get("decision") is not None:
            known["decision"] = Decision.from_json(known["decision"])
        if known.get("cancelled") is not None:
            known["cancelled"] = Cancellation.from_json(known["cancelled"])
        if known.get("metadata") is None:
            known["metadata"] = {}
        for name in ("id", "status"):
            if name not in known:
                raise KeyError(name)
        return cls(**known, extra=extra)

    @property
    def done(self) -> bool:
        """True once the review can no longer change (decided, cancelled, expired or superseded)."""
        return self.status in FINAL_STATUSES


def outcome(review: Review) -> dict[str, Any]:
    """What an agent resumes with: a JSON object that says how the review ended.

    ``status`` is ``pending``, ``approved``, ``rejected``, ``revise``, ``answered``, ``expired``,
    ``cancelled`` or ``superseded``; ``answer``, ``reason``, ``feedback`` and ``by`` come from the
    decision (or the cancellation), ``review_id`` names the review. The ADK adapter sends it as
    the ``FunctionResponse``'s ``response``, the LangGraph adapter as the value ``interrupt()``
    returns.
    """
    result: dict[str, Any] = {"review_id": review.id, "status": review.status}
    if review.decision is not None:
        decision = review.decision
        result.update(
            status=_ACTION_OUTCOMES.get(decision.action, decision.action),
            answer=decision.answer,
            reason=decision.reason,
            feedback=decision.feedback,
            by=decision.by,
            at=decision.at,
        )
    elif review.cancelled is not None:
        result.update(reason=review.cancelled.reason, by=review.cancelled.by, at=review.cancelled.at)
    elif review.status == "superseded":
        result["superseded_by"] = review.superseded_by
    return result
