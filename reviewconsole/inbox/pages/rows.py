"""The inbox list's rows: what each says, rendered once (``templates/inbox/_row.html``) for the
page and for the live list's snapshot (``items.json``'s ``row``), so both show the same row.

A row's words are the item page's heading (``headings.heading``): its title, and under it the
same one-line summary, word for word.
"""

from __future__ import annotations

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from ..items.actions import allows_bulk_approve
from ..models import CANCELLED, SESSION_FAILED, Item, ItemStatus
from .headings import heading

__all__ = ["decision_label", "render_row"]


_DECISIONS = {
    "approve": "Approved",
    "reject": "Rejected",
    "revise": "Feedback",
    "answer": "Answered",
    "timeout": "Expired",
    CANCELLED: "Cancelled",
}


def decision_label(item: Item) -> str:
    """The decided item's outcome in a word or two ("Approved", "Expired", "Superseded"…)."""
    if item.status == ItemStatus.CANCELLED:
        return {SESSION_FAILED: "Session failed", CANCELLED: "Cancelled"}.get(item.decision, "Superseded")
    if item.status == ItemStatus.PENDING:
        return ""
    return _DECISIONS.get(item.decision, item.decision.replace("_", " ").capitalize() or "Decided")


def render_row(item: Item, *, decided: bool) -> SafeString:
    """The ``<tr>`` of ``item``: the pending list's columns, or the decided list's (``decided``).

    Times are written in the active zone (the person's); no request context is needed (a row
    has no form), so a page of rows costs no context processor per row. A pending row's checkbox
    says whether the item may be approved with others (``data-bulk-approve``: ``inbox.js`` counts
    them beside the selection, so "Approve selected" says beforehand what it will act on).
    """
    context = {
        "item": item,
        "row": heading(item),
        "decided": decided,
        "outcome": decision_label(item),
        "bulk_approve": not decided and allows_bulk_approve(item),
    }
    return SafeString(render_to_string("inbox/_row.html", context))
