"""What a reviewer reads after deciding: one sentence per request kind and action.

- ``email_draft``: "Reply approved: it is sent to the customer." ("Edited reply approved: …"),
  "Reply rejected: nothing is sent to the customer.", "Feedback sent: a new draft is being written."
- ``vip_discount``: "VIP discount approved: 20% for Ada Lovelace." / "VIP discount declined: …"
- ``refund``: "Refund approved: $250.00 for order A-1001 — …", "Refund rejected: …"; its
  confirmation step (``submit_refund``): "Refund submitted: …", "Refund declined: …"
- ``support_case``: "Approved: <title>.", "Declined: <title>."
- ``incident_triage``: "Triage sent: the workflow goes on with it."
- ``review_text``/``review_draft``: feedback reads "Feedback sent: a new draft is being written."
- anything else: "Approved: <title>.", "Rejected: …", "Feedback sent: …", "Answer sent: …"

The sentence is plain text (Django's messages framework escapes it); it names the request as its
row does (``headings.heading``).
"""

from __future__ import annotations

from ..items.actions import request_kind
from ..models import Item
from .drafts import draft_of
from .headings import heading

__all__ = ["confirmation"]


def _edited(item: Item, draft: str | None) -> bool:
    """Whether ``draft`` changes the item's draft (as ``items.decisions`` compares them)."""
    if draft is None:
        return False
    candidate = draft.replace("\r\n", "\n").strip("\n")
    return bool(candidate.strip()) and candidate != (draft_of(item) or "").strip("\n")


_NAMED = ("VIP discount ", "Submit refund ", "Refund ")
"""Titles' leading words the sentence already says."""

_ANY = {
    "approve": "Approved: {title}.",
    "reject": "Rejected: {title}.",
    "revise": "Feedback sent: {title}.",
    "answer": "Answer sent: {title}.",
}
_REVIEW = {**_ANY, "revise": "Feedback sent: a new draft is being written."}
_KINDS = {
    "email_draft": {
        "approve": "Reply approved: it is sent to the customer.",
        "reject": "Reply rejected: nothing is sent to the customer.",
        "revise": "Feedback sent: a new draft is being written.",
    },
    "vip_discount": {
        "approve": "VIP discount approved: {title}.",
        "reject": "VIP discount declined: {title}.",
    },
    "refund": {
        "approve": "Refund approved: {title}. It goes on to be submitted.",
        "reject": "Refund rejected: {title}. The customer is told.",
    },
    "refund:submit_refund": {
        "approve": "Refund submitted: {title}.",
        "reject": "Refund declined: {title}. It is not submitted.",
    },
    "support_case": {"approve": "Approved: {title}.", "reject": "Declined: {title}."},
    "incident_triage": {"answer": "Triage sent: the workflow goes on with it."},
    "review_draft": _REVIEW,
    "review_text": _REVIEW,
}


def confirmation(item: Item, action: str, *, draft: str | None = None) -> str:
    """The sentence confirming ``action`` on ``item``; ``draft``: the draft posted with it (an
    approval of a draft that differs from the one asked about reads as an edited one).

    An action with no sentence of its kind gets the generic one; an unknown action "Decision
    recorded: <title>."."""
    kind = request_kind(item)
    tool = (item.tool_call or {}).get("name") if isinstance(item.tool_call, dict) else None
    wording = _KINDS.get(f"{kind}:{tool}") or _KINDS.get(kind) or {}
    sentence = wording.get(action) or _ANY.get(action) or "Decision recorded: {title}."
    if action == "approve" and kind == "email_draft" and _edited(item, draft):
        sentence = "Edited reply approved: your version is sent to the customer."
    title = heading(item).title
    if kind in ("vip_discount", "refund"):  # "Refund approved: $250.00 for …", not "… approved: Refund $250.00"
        title = next((title.removeprefix(p) for p in _NAMED if title.startswith(p)), title)
    if title.endswith((".", "?", "!", "…")):  # "Rejected: Refund $250?", not "… $250?."
        sentence = sentence.replace("{title}.", "{title}")
    return sentence.format(title=title)
