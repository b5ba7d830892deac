"""Each request's title and one-line summary, written for people, per request kind.

The inbox rows (``rows.render_row``), the item page's heading, ``items.json``'s ``snippet``, the
new-request emails and the bulk messages name an item with :func:`heading`, the one formatter of
its words: the list row's line is the page's line under the title, word for word. Each request
kind has its own wording:

| request kind | title | summary |
|---|---|---|
| ``refund`` | "Refund $250.00 for order A-1001 — Arrived broken" ("Submit refund …" to confirm) | its rule |
| ``vip_discount`` | "VIP discount 20% for Ada Lovelace" (the customer's name, else their id) | tier |
| ``email_draft`` | "Email reply — <subject>" ("… to <customer>" when ``metadata["customer"]``) | the complaint |
| ``incident_triage`` | the workflow's own question ("Triage this incident: Checkout down") | the details |
| ``support_case`` | "Refund $249.00 for order o-1001", "Replacement for order o-1001" | what the agent asks |
| ``review_*`` (API reviews) | the title its client gave | the message, or the draft's first line |
| anything else | a tool call: "Approve: Submit refund", else its or its workflow's title | arguments or message |

Outside code names its own kinds with :func:`register_heading`. Everything is plain text (the
templates escape it); numbers and money go through :mod:`.formats`. Reading a heading costs no
query: it uses the item's own columns (``title``, ``message``, ``payload``, ``tool_call``,
``metadata``, ``workflow``; once decided ``decision``, ``response``, ``decided_by_label``), never
its session. A tool call approved with edited arguments is named with those, the ones that ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...demo import refund_approval, support_handoff, vip_discount
from ...workflows import UnknownWorkflowError, get
from ..items.actions import request_kind
from ..models import POLICY_LABEL, Item
from .drafts import draft_of
from .formats import humanize, money, number, one_line

__all__ = ["HEADINGS", "SUMMARY_LENGTH", "Heading", "heading", "register_heading"]


@dataclass(frozen=True)
class Heading:
    title: str
    """What the item is, in a few words (the row's link, the page's ``<h1>``)."""
    summary: str
    """One line under it (at most :data:`SUMMARY_LENGTH` characters): the page's, the list row's."""


SUMMARY_LENGTH = 300
"""Most characters of a summary (``formats.one_line``; the list's CSS clamps it to two lines)."""


HEADINGS: dict[str, Callable[[Item], Heading]] = {}
"""Request kind → the function that names its items (:func:`register_heading`)."""


def register_heading(kind: str, name: Callable[[Item], Heading]) -> None:
    """Name the items of request kind ``kind`` with ``name`` (replacing any earlier one)."""
    HEADINGS[kind] = name


def heading(item: Item) -> Heading:
    """The title and summary of ``item``: its kind's (:data:`HEADINGS`), else :func:`generic`,
    each on one line (``formats.one_line``: the summary cut to :data:`SUMMARY_LENGTH`).

    A kind's function that fails on a shape it did not expect falls back to :func:`generic`.
    """
    name = HEADINGS.get(request_kind(item))
    found = None
    if name is not None:
        try:
            found = name(item)
        except (AttributeError, KeyError, TypeError, ValueError):
            found = None
    if found is None or not found.title:
        found = generic(item)
    return Heading(one_line(found.title), one_line(found.summary, SUMMARY_LENGTH))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _args(item: Item) -> dict[str, Any]:
    """The tool call's arguments: those that ran once an approval edited them (the stored
    response's ``args``), else the long-running call's ``payload["args"]``, else the call's."""
    ran = _dict(item.response).get("args") if item.decision == "approve" else None
    return _dict(ran) or _dict(_dict(item.payload).get("args")) or _dict(_dict(item.tool_call).get("args"))


def _tool(item: Item) -> str:
    return str(_dict(item.tool_call).get("name") or _dict(item.payload).get("tool") or item.function_name or "")


def args_words(args: dict[str, Any]) -> str:
    """Arguments as words: ``{"order_id": "o-1", "amount": 249.0}`` → ``Order id o-1 · Amount 249``
    (nested values left out)."""
    shown = [(k, v) for k, v in args.items() if not isinstance(v, dict | list)]
    return " · ".join(f"{humanize(k)} {number(v)}" for k, v in shown)


def _spec_title(item: Item) -> str:
    try:
        return get(item.workflow).title
    except UnknownWorkflowError:
        return humanize(item.workflow) if item.workflow else "Request"


def generic(item: Item) -> Heading:
    """Any kind without its own wording: a tool call names the tool and its arguments, anything
    else its title (the session's) or the workflow's, with the message's first words."""
    tool = _tool(item)
    if item.kind in ("confirmation", "long_running") and tool and tool not in ("adk_request_input",):
        return Heading(f"Approve: {humanize(tool)}", args_words(_args(item)) or item.title)
    message = one_line(item.message, SUMMARY_LENGTH)
    title = item.title or _spec_title(item)
    return Heading(title, message if message != one_line(title, SUMMARY_LENGTH) else "")


# -- the demo's request kinds ------------------------------------------------------------------


def _refund(item: Item) -> Heading:
    args = _args(item)
    interim = _dict(_dict(item.payload).get("interim"))
    amount = args.get("amount", interim.get("amount"))
    order = args.get("order_id") or interim.get("order_id") or item.title
    reason = args.get("reason") or interim.get("reason") or ""
    what = f"Refund {money(amount)} for order {order}" + (f" — {reason}" if reason else "")
    if _tool(item) == "submit_refund":
        asked = (_dict(_dict(item.payload).get("args")) or _dict(_dict(item.tool_call).get("args"))).get("amount")
        said = "Approved: confirm sending it to the payment system."
        if asked is not None and asked != amount:  # a reviewer lowered it: say so beside the request's own amount
            said = f"The amount was edited from {money(asked)} to {money(amount)} before it was submitted."
        return Heading(f"Submit {what[0].lower()}{what[1:]}", said)
    return Heading(what, _refund_rule(item, amount))


def _refund_rule(item: Item, amount: Any) -> str:
    """Which approval rule the refund's request is under, or how a rule decided it."""
    limit = money(refund_approval.POLICY_LIMIT)
    within = isinstance(amount, int | float) and amount <= refund_approval.POLICY_LIMIT
    if item.decided_by_label.startswith(POLICY_LABEL):
        if within and item.decision == "approve":
            return f"Within the {limit} policy limit: approved by policy."
        outcome = {"approve": "Approved", "reject": "Rejected"}.get(item.decision, "Decided")
        return f"{outcome} by policy ({item.decided_by_label.removeprefix(POLICY_LABEL)})."
    if within:
        return f"Within the {limit} policy limit, but left to a person: approve or reject it."
    if isinstance(amount, int | float) and amount > refund_approval.FOUR_EYES_LIMIT:
        return f"Over {money(refund_approval.FOUR_EYES_LIMIT)}: two different people must approve it."
    return f"Over the {limit} policy limit: a person must approve it."


def _vip(item: Item) -> Heading:
    payload = _dict(item.payload)
    customer_id = str(payload.get("customer_id") or "")
    known = vip_discount.CUSTOMERS.get(customer_id, {})
    who = known.get("name") or (f"customer {customer_id}" if customer_id else "a customer")
    discount = payload.get("proposed_discount") or vip_discount.VIP_DISCOUNT
    tier = payload.get("tier") or known.get("tier") or ""
    summary = f"Tier: {tier}. Confirm the VIP discount or decline it." if tier else "Confirm the VIP discount."
    return Heading(f"VIP discount {number(discount)} for {who}", summary)


def _subject(draft: str) -> str:
    """The ``Subject:`` line of a drafted email, without its label ("" when it has none)."""
    first = next((line.strip() for line in draft.splitlines() if line.strip()), "")
    return first[len("subject:") :].strip() if first.lower().startswith("subject:") else ""


def _email(item: Item) -> Heading:
    """The session's title is the customer's complaint (its first text)."""
    draft = draft_of(item) or ""
    subject = _subject(draft) or item.title or "a customer complaint"
    customer = one_line(_dict(item.metadata).get("customer"), 80)
    to = f" to {customer}" if customer else ""
    summary = f"Customer wrote: {item.title}" if item.title else draft
    return Heading(f"Email reply{to} — {subject}", summary)


def _triage(item: Item) -> Heading:
    incident = _dict(_dict(item.payload).get("incident"))
    title = one_line(item.message) or f"Triage this incident: {incident.get('title', item.title)}"
    return Heading(title, str(incident.get("details") or ""))


def _support(item: Item) -> Heading:
    args, tool = _args(item), _tool(item)
    order = args.get("order_id", "")
    known = support_handoff.ORDERS.get(str(order), {})
    if tool == "submit_refund":
        title = f"Refund {money(args.get('amount'))} for order {order}"
    elif tool == "submit_replacement":
        title = f"Replacement for order {order}"
    else:
        return generic(item)
    product = f"{known['item']}, {known['status']}" if known else ""
    wrote = f"Customer wrote: {item.title}" if item.title else ""
    return Heading(title, " · ".join(p for p in (product, wrote) if p))


def _review(item: Item) -> Heading:
    draft = draft_of(item)
    first = next((line for line in (draft or "").splitlines() if line.strip()), "")
    return Heading(item.title or _spec_title(item), first or item.message)


for _kind, _name in (
    ("refund", _refund),
    ("vip_discount", _vip),
    ("email_draft", _email),
    ("incident_triage", _triage),
    ("support_case", _support),
    ("review_text", _review),
    ("review_confirm", _review),
    ("review_draft", _review),
    ("review_form", _review),
):
    register_heading(_kind, _name)
