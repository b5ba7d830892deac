"""Drafts under review: the draft of an item, the diff of an edit, and a session's revisions.

The email review asks with ``REVIEW_PROMPT`` ("…\\n\\n---\\n<draft>\\n---"), so each item carries
the draft it asked about; a session's items in order are its revisions. Diffs are line diffs
(``difflib``) returned as data for templates, which escape every line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from ..items.actions import request_kind
from ..models import Item

__all__ = ["DiffLine", "Revision", "diff_lines", "draft_of", "edit_diff", "revisions"]

_FENCE = "\n---\n"


def draft_of(item: Item) -> str | None:
    """The draft an email-draft item asks about (in its message), or an API review of a draft
    (``payload["draft"]``); None for other kinds."""
    kind = request_kind(item)
    if kind == "review_draft":
        draft = item.payload.get("draft") if isinstance(item.payload, dict) else None
        return draft if isinstance(draft, str) else None
    if kind != "email_draft":
        return None
    message = item.message or ""
    start = message.find(_FENCE)
    if start == -1:
        return None
    body = message[start + len(_FENCE) :]
    end = body.rfind("\n---")
    return body[:end] if end != -1 else body


@dataclass(frozen=True)
class DiffLine:
    """One line of a diff: ``op`` is ``" "`` (kept), ``"+"`` (added) or ``"-"`` (removed)."""

    op: str
    text: str

    @property
    def css(self) -> str:
        return {"+": "add", "-": "del"}.get(self.op, "same")


def diff_lines(before: str, after: str) -> list[DiffLine]:
    """Every line of ``before`` and ``after`` in order, marked kept, removed or added."""
    a, b = before.splitlines(), after.splitlines()
    lines: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            lines.extend(DiffLine(" ", t) for t in a[i1:i2])
            continue
        lines.extend(DiffLine("-", t) for t in a[i1:i2])
        lines.extend(DiffLine("+", t) for t in b[j1:j2])
    return lines


def edit_diff(original: str, edited: str) -> str:
    """The unified diff stored with a decision that edited the draft."""
    return "\n".join(
        difflib.unified_diff(original.splitlines(), edited.splitlines(), "agent draft", "approved draft", lineterm="")
    )


def parse_unified(diff: str) -> list[DiffLine]:
    """A stored unified diff as lines for the page (headers dropped)."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        lines.append(DiffLine(line[:1] if line[:1] in "+-" else " ", line[1:]))
    return lines


@dataclass
class Revision:
    """One round of the review loop: the draft asked about and what the reviewer answered."""

    number: int
    item: Item
    draft: str
    changes: list[DiffLine] = field(default_factory=list)
    feedback: str = ""
    edited: list[DiffLine] = field(default_factory=list)

    @property
    def diff_id(self) -> str:
        return f"revision-{self.number}-diff"

    @property
    def edit_id(self) -> str:
        return f"revision-{self.number}-edit"

    @property
    def changed(self) -> bool:
        return any(line.op != " " for line in self.changes)


def _feedback(response: Any) -> str:
    if isinstance(response, dict):
        response = response.get("result", "")
    return response if isinstance(response, str) and response not in ("approve", "reject") else ""


def revisions(item: Item) -> list[Revision]:
    """Every draft of ``item``'s session up to and including ``item``'s, each with its diff
    against the previous draft and the feedback that led to the next."""
    found: list[Revision] = []
    previous: str | None = None
    rows = Item.objects.filter(session_id=item.session_id, created_at__lte=item.created_at).order_by("created_at", "id")
    for row in rows.select_related("session"):
        draft = draft_of(row)
        if draft is None:
            continue
        changes = diff_lines(previous, draft) if previous is not None else []
        found.append(
            Revision(
                number=len(found) + 1,
                item=row,
                draft=draft,
                changes=changes,
                feedback=_feedback(row.response) if row.decision == "revise" else "",
                edited=parse_unified(row.edit_diff) if row.edit_diff else [],
            )
        )
        previous = draft
    return found
