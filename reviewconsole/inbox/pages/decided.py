"""What a decided item's page shows first: the decision, as it was answered.

:func:`decision_shown` reads the item's stored answer (``Item.response``, ``decision``,
``reason``, ``edit_diff``, ``decided_by_label``, ``decided_at``) into :class:`DecisionShown`:

- a form's answer: every field with its label (the schema's ``title``, else the name as words),
  nested objects as "Contact: Name", lists joined with commas, numbers and yes/no as people read them;
- an approved draft: the text sent (the reviewer's edit when there was one, ``edited``);
- feedback for a new draft, the reason given, then who decided and when: said once on the page,
  here (under four eyes, with the first approval);
- after feedback, a link to the request that replaced it (:func:`replacement`: the session's next
  request, or a review's revision), once there is one.

:func:`render_decision` renders that section (``templates/inbox/_decided.html``) for the page and
for its ``status.json``, so a page left open while someone else decides shows it in place
(``static/console/item.js``). All of it is data for templates, which escape it (an LLM, a caller
or a reviewer wrote it): the section is autoescaped HTML.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from ..items.actions import DRAFT_KINDS, request_kind
from ..items.policy_gate import approvals_of
from ..models import Item, ItemStatus
from .drafts import draft_of, parse_unified
from .formats import humanize, number
from .headings import heading
from .rows import decision_label

__all__ = [
    "AnsweredField",
    "DecisionShown",
    "Replacement",
    "answered_fields",
    "decision_context",
    "decision_shown",
    "render_decision",
    "replacement",
]

MAX_FIELDS = 200
"""Most fields listed of one answer (a form's answer is bounded by ``MAX_LENGTHS["answer"]``)."""


@dataclass(frozen=True)
class AnsweredField:
    label: str
    value: str


@dataclass(frozen=True)
class DecisionShown:
    decision: str
    """approve, reject, revise, answer, timeout, cancelled…"""
    label: str
    """"Approved", "Rejected", "Feedback", "Answered", "Expired"…"""
    by: str
    at: dt.datetime | None
    fields: list[AnsweredField] = field(default_factory=list)
    sent: str | None = None
    """The draft sent: the reviewer's edit, else the draft as asked; None when nothing was sent."""
    edited: bool = False
    feedback: str = ""
    reason: str = ""


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``) followed, one level per call."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return target if isinstance(target, dict) else {}
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):  # Optional[X]: the first branch that is not null
        branch = next((b for b in any_of if isinstance(b, dict) and b.get("type") != "null"), {})
        return {**_resolve(branch, root), **{k: v for k, v in schema.items() if k in ("title", "description")}}
    return schema


def _text(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool | int | float):
        return number(value)
    return str(value)


def _label(key: str, node: Any, root: dict[str, Any]) -> str:
    title = _resolve(node, root).get("title") or (node.get("title") if isinstance(node, dict) else "")
    if not title or title == key.replace("_", " ").title():  # pydantic's "Affected Customers": as words
        return humanize(key)
    return str(title)


def answered_fields(value: Any, schema: Any) -> list[AnsweredField]:
    """Each field of a form's answer ``value`` with its label from ``schema`` (JSON Schema), in
    the schema's order, then any the schema does not name; at most :data:`MAX_FIELDS`."""
    root = schema if isinstance(schema, dict) else {}
    found: list[AnsweredField] = []

    def walk(data: Any, node: Any, label: str) -> None:
        node = _resolve(node, root)
        if len(found) >= MAX_FIELDS:
            return
        if isinstance(data, dict):
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            for key in [k for k in props if k in data] + [k for k in data if k not in props]:
                name = _label(key, props.get(key, {}), root)
                walk(data[key], props.get(key, {}), f"{label}: {name}" if label else name)
        elif isinstance(data, list) and any(isinstance(v, dict | list) for v in data):
            for n, entry in enumerate(data, 1):
                walk(entry, node.get("items", {}), f"{label} {n}")
        else:
            text = (", ".join(_text(v) for v in data) or "—") if isinstance(data, list) else _text(data)
            found.append(AnsweredField(label or "Answer", text))

    walk(value, root, "")
    return found


def decision_shown(item: Item) -> DecisionShown | None:
    """The decision of ``item`` as its page shows it first; None while it waits or when nothing
    was decided (superseded, or its session failed or was cancelled before an answer)."""
    if item.status != ItemStatus.RESOLVED:
        return None
    answer = item.response
    if isinstance(answer, dict) and set(answer) == {"result"}:  # {"result": X} as sent: X as received
        answer = answer["result"]
    response = item.response if isinstance(item.response, dict) else {}
    shown = DecisionShown(
        decision=item.decision,
        label=decision_label(item),
        by=item.decided_by_label,
        at=item.decided_at,
        reason=item.reason,
    )
    if item.decision == "answer":
        return _with(shown, fields=answered_fields(answer, item.response_schema))
    if item.decision == "revise":
        return _with(shown, feedback=str(answer or ""))
    if item.decision == "approve" and request_kind(item) in DRAFT_KINDS:
        edited = response.get("draft")
        if isinstance(edited, str):
            return _with(shown, sent=edited, edited=True)
        return _with(shown, sent=draft_of(item))
    return shown


@dataclass(frozen=True)
class Replacement:
    """The request asked after feedback, as the decided page links to it."""

    pk: int
    title: str
    """Its heading's title (plain text: the template escapes it)."""
    pending: bool


def replacement(item: Item) -> Replacement | None:
    """The request that replaced ``item`` after its feedback: the oldest later request of its
    session, or of a session that replaces it (a review's revision, ``metadata["supersedes_session"]``),
    whatever its status; None for any other decision or while there is none yet."""
    if item.status != ItemStatus.RESOLVED or item.decision != "revise":
        return None
    later = Q(session_id=item.session_id) | Q(workflow=item.workflow, metadata__supersedes_session=item.session_id)
    upcoming = Item.objects.filter(later, pk__gt=item.pk).order_by("pk").first()
    if upcoming is None:
        return None
    return Replacement(pk=upcoming.pk, title=heading(upcoming).title, pending=upcoming.status == ItemStatus.PENDING)


def _with(shown: DecisionShown, **changes: Any) -> DecisionShown:
    return DecisionShown(**{**shown.__dict__, **changes})


def decision_context(item: Item, shown: DecisionShown | None = None) -> dict[str, Any]:
    """What ``templates/inbox/_decided.html`` reads: ``item``, ``decided`` (``shown``, else
    :func:`decision_shown`; None when nothing was decided), ``stored_diff`` (the edit's lines),
    ``approvals`` (``policy_gate.approvals_of``: four eyes' first approval, or None) and
    ``replaced_by`` (:func:`replacement`, or None)."""
    return {
        "item": item,
        "decided": shown if shown is not None else decision_shown(item),
        "stored_diff": parse_unified(item.edit_diff) if item.edit_diff else [],
        "approvals": approvals_of(item),
        "replaced_by": replacement(item),
    }


def render_decision(item: Item) -> SafeString | None:
    """The decision section of ``item``'s page as HTML (autoescaped; times in the active zone),
    or None when nothing was decided (:func:`decision_shown`)."""
    context = decision_context(item)
    if context["decided"] is None:
        return None
    return SafeString(render_to_string("inbox/_decided.html", context))
