"""A session's outcome in one word, as the admin lists and filters sessions.

A completed session's outcome is what its last decision was (the item decided last: approved,
rejected, answered, revised, expired, cancelled), or "completed" when nobody was asked; any other
session's is its status (waiting, running, failed, cancelled). The last decision comes with the
rows, one correlated subquery per session on the items' ``session`` index
(:func:`with_last_decision`), so a page of sessions costs one query.
"""

from __future__ import annotations

from django.db.models import OuterRef, Q, QuerySet, Subquery

from engine import SessionStatus

from ..inbox.models import Item, ItemStatus
from ..workflow_sessions.models import WorkflowSession

__all__ = ["OUTCOMES", "outcome_q", "session_outcome_word", "with_last_decision"]

DECIDED = {
    "approve": "approved",
    "reject": "rejected",
    "answer": "answered",
    "revise": "revised",
    "timeout": "expired",
    "cancelled": "cancelled",
}
"""An item's ``decision`` → the outcome of the session it ended."""

BY_STATUS = {
    SessionStatus.NEW.value: "running",
    SessionStatus.RUNNING.value: "running",
    SessionStatus.WAITING.value: "waiting",
    SessionStatus.FAILED.value: "failed",
    SessionStatus.CANCELLED.value: "cancelled",
    SessionStatus.COMPLETED.value: "completed",
}
"""A session's status → its outcome (a completed one's, when nobody decided anything)."""

OUTCOMES = ("approved", "rejected", "answered", "expired", "cancelled", "failed", "waiting", "running", "completed")
"""The outcomes the admin filters by, in its order."""


def with_last_decision(queryset: QuerySet[WorkflowSession]) -> QuerySet[WorkflowSession]:
    """``queryset`` annotated with ``last_decision``: the decision of its item decided last (or None)."""
    last = (
        Item.objects.filter(session=OuterRef("pk"), status=ItemStatus.RESOLVED)
        .exclude(decision="")
        .order_by("-decided_at", "-id")
        .values("decision")[:1]
    )
    return queryset.annotate(last_decision=Subquery(last))


def session_outcome_word(status: str, last_decision: str | None) -> str:
    """The outcome of a session with this ``status`` whose last decision was ``last_decision``."""
    if status == SessionStatus.COMPLETED.value and last_decision:
        return DECIDED.get(last_decision, last_decision)
    return BY_STATUS.get(status, status)


def outcome_q(outcome: str) -> Q:
    """The sessions (annotated by :func:`with_last_decision`) whose outcome is ``outcome``."""
    completed = Q(status=SessionStatus.COMPLETED.value)
    decisions = [decision for decision, word in DECIDED.items() if word == outcome]
    statuses = [status for status, word in BY_STATUS.items() if word == outcome and status != "completed"]
    found = Q(status__in=statuses) if statuses else Q(pk__in=[])
    if decisions:
        found |= completed & Q(last_decision__in=decisions)
    if outcome == "completed":
        found |= completed & Q(last_decision__isnull=True)
    return found
