"""The inbox list's filters: what the list shows, read from (and written back to) the page's
query string (``InboxFilters``); ``selectors`` applies them."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict

__all__ = ["STATUSES", "InboxFilters"]

STATUSES = ("pending", "resolved", "expired", "cancelled")


@dataclass(frozen=True)
class InboxFilters:
    """What the list shows; parsed from (and written back to) the page's query string."""

    queue: str = ""
    workflow: str = ""
    kind: str = ""
    mine: bool = False
    unclaimed: bool = False
    overdue: bool = False
    status: str = "pending"
    q: str = ""
    by_policy: bool = False
    """Decided by an approval policy or a standing approval (``policy_gate.by_policy``): decided items only."""
    my_decisions: bool = False
    """Decided by the user: decided items only (the ``interrupt_decided_by_at`` index)."""

    @classmethod
    def from_query(cls, query: QueryDict) -> InboxFilters:
        """Read filters leniently: unknown values fall back to the defaults, texts are cut."""
        status = query.get("status", "pending")
        flag = {"1", "on", "true", "yes"}
        by_policy = query.get("by_policy", "") in flag
        my_decisions = query.get("my_decisions", "") in flag
        if (by_policy or my_decisions) and status == "pending":
            status = "resolved"  # what a policy or the user decided is decided
        return cls(
            queue=query.get("queue", "")[:50],
            workflow=query.get("workflow", "")[:100],
            kind=query.get("kind", "")[:30],
            mine=query.get("mine", "") in flag,
            unclaimed=query.get("unclaimed", "") in flag,
            overdue=query.get("overdue", "") in flag,
            status=status if status in STATUSES else "pending",
            q=" ".join(query.get("q", "").split())[:200],
            by_policy=by_policy,
            my_decisions=my_decisions,
        )

    def to_query(self, **changes: Any) -> str:
        """The query string of these filters (with ``changes``), defaults left out."""
        values = replace(self, **changes) if changes else self
        pairs = []
        for f in fields(self):
            value = getattr(values, f.name)
            if value and value != f.default:
                pairs.append((f.name, "1" if value is True else value))
        return urlencode(pairs)

    @property
    def active(self) -> bool:
        return self != InboxFilters()
