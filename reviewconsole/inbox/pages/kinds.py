"""Kind-specific detail views: what each kind of request shows a reviewer.

| request kind | shows |
|---|---|
| ``email_draft`` | complaint, draft (editable before approval), diff against the previous draft, revisions |
| ``vip_discount`` | customer (id and name), tier, proposed discount (the interrupt's payload) |
| ``refund`` | order, amount, reason, policy limit (the approval's ``args``/``interim``, or the ``tool_call``) |
| ``review_*`` (an API review) | message, draft or payload; a revision's diff against the earlier request |
| anything else | the message, the payload and the tool call, as text |

Amounts are shown as money (``$250.00``, ``formats.money``). Every value is data for templates, which
escape it: all of it may come from an LLM or a caller.
"""

from __future__ import annotations

import json
from typing import Any

from ...demo import refund_approval, vip_discount
from ..items.actions import request_kind
from ..models import Item
from .drafts import diff_lines, draft_of, revisions
from .formats import money

__all__ = ["detail_parts", "money", "session_input"]


def session_input(item: Item) -> Any:
    """The session's first message (its starting input), parsed as JSON when it is JSON."""
    first = item.session.events.order_by("seq").values_list("data", flat=True).first() or {}
    text = "".join(p.get("text", "") for p in (first.get("content") or {}).get("parts", []))
    try:
        return json.loads(text)
    except ValueError:
        return text


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _email(item: Item) -> dict[str, Any]:
    history = revisions(item)
    current = history[-1] if history else None
    return {
        "complaint": item.session.state.get("complaint", ""),
        "draft": draft_of(item) or item.session.state.get("draft", ""),
        "previous_feedback": history[-2].feedback if len(history) > 1 else "",
        "changes": current.changes if current else [],
        "revision_count": len(history),
    }


def _vip(item: Item) -> dict[str, Any]:
    payload = _dict(item.payload)
    customer_id = str(payload.get("customer_id", ""))
    known = vip_discount.CUSTOMERS.get(customer_id, {})
    asked = _dict(session_input(item)).get("message", "")
    return {
        "customer_id": customer_id,
        "customer_name": known.get("name", ""),
        "tier": payload.get("tier", ""),
        "proposed_discount": payload.get("proposed_discount", ""),
        "question": asked,
    }


def _refund(item: Item) -> dict[str, Any]:
    payload = _dict(item.payload)
    args = _dict(payload.get("args")) or _dict(_dict(item.tool_call).get("args"))
    interim = _dict(payload.get("interim"))
    started = _dict(session_input(item))
    amount = args.get("amount", started.get("amount"))
    limit = interim.get("policy_limit", refund_approval.POLICY_LIMIT)
    step = "approval" if item.function_name == "ask_for_approval" else "submission"
    tool = _dict(item.tool_call).get("name") or payload.get("tool", "")
    return {
        "step": step,
        "tool": tool,
        "order_id": args.get("order_id", started.get("order_id", "")),
        "amount": amount,
        "amount_text": money(amount),
        "reason": args.get("reason") or started.get("reason", ""),
        "policy_limit": limit,
        "policy_limit_text": money(limit),
        "over_limit": isinstance(amount, int | float) and isinstance(limit, int | float) and amount > limit,
        "ticket": interim.get("ticketId", ""),
    }


def _pretty(value: Any) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _revision(item: Item) -> dict[str, Any] | None:
    """What changed since the request ``item`` revises (``metadata["supersedes_session"]``: the
    draft's lines when both have a draft, else the payload's as JSON), or None."""
    older_session = item.metadata.get("supersedes_session") if isinstance(item.metadata, dict) else None
    if not isinstance(older_session, str):
        return None
    older = Item.objects.filter(session_id=older_session).order_by("-pk").first()
    if older is None:
        return None
    before, after = draft_of(older), draft_of(item)
    if before is None or after is None:
        before, after = _pretty(older.payload), _pretty(item.payload)
    changes = diff_lines(before, after)
    return {"url": f"/inbox/items/{older.pk}/", "changes": changes, "changed": any(c.op != " " for c in changes)}


def _review(item: Item) -> dict[str, Any]:
    return {"draft": draft_of(item), "revision": _revision(item)}


def detail_parts(item: Item) -> dict[str, Any]:
    """``{"kind_template": …, "facts": {…}}`` for the detail page of ``item``."""
    kind = request_kind(item)
    generic = {"payload_text": _pretty(item.payload), "tool_call_text": _pretty(item.tool_call)}
    if kind == "email_draft":
        return {"kind_template": "inbox/kinds/email_draft.html", "facts": _email(item), **generic}
    if kind == "vip_discount":
        return {"kind_template": "inbox/kinds/vip_discount.html", "facts": _vip(item), **generic}
    if kind == "refund":
        return {"kind_template": "inbox/kinds/refund.html", "facts": _refund(item), **generic}
    if kind.startswith("review_"):
        return {"kind_template": "inbox/kinds/review.html", "facts": _review(item), **generic}
    return {"kind_template": "inbox/kinds/generic.html", "facts": {}, **generic}
