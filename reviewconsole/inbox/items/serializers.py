"""The inbox's item as JSON: one serialiser for every consumer (the API, outbound events, the
session JSON, the inbox's list and live messages), and a session with its items.

- :func:`item_json` is the item (one ``Item`` row: the engine's interrupt as the inbox holds
  it) in the API's field names (``InterruptOut`` in ``api/schemas.py``, pinned by the OpenAPI
  document), plus what the inbox adds (title, due time, claim, reason and edits, its page's URL).
  The API's schema picks its own fields from it; ``outbound.outbox_consumer.interrupt_data`` maps it to
  the outbound payload's names.
- :func:`list_entry` is :func:`item_json` with the presentation a reviewer's list needs (the
  line shown, the status sentence, the queue's id and name, overdue, bulk approval) and the
  inbox's one renaming: there ``id`` is the item's row id, which the inbox's URLs and its
  scripts name items by, and the interrupt's id is ``interrupt_id``.

Every text is plain: pages render it with ``textContent``, never as HTML.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from ...preferences.times import absolute
from ...workflow_sessions.models import WorkflowSession
from ...workflow_sessions.serializers import session_json
from ..models import CANCELLED, SESSION_FAILED, Item, ItemStatus
from ..pages.headings import heading
from .actions import allows_bulk_approve
from .approvals import approvals_json

__all__ = [
    "item_json",
    "items_json",
    "list_entries",
    "list_entry",
    "session_with_items",
    "status_sentence",
]


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _utc(value: dt.datetime | None) -> str:
    """``value`` in the zone active for the request: the person's on a page, UTC for the API and sockets."""
    return absolute(value) if value is not None else ""


_LOOKUP: Any = object()
"""``approvals`` not given: :func:`item_json` looks them up for its one row."""


def item_json(row: Item, now: dt.datetime | None = None, approvals: Any = _LOOKUP) -> dict[str, Any]:
    """One item as every JSON consumer sees it.

    ``{"id": interrupt id, "item_id": row id, "session_id", "workflow", "title", "kind",
    "function_name", "status", "queue": slug, "message", "payload", "response_schema",
    "response", "args_digest": str | None (a tool call's confirmation or long-running result: the
    hex SHA-256 of its name and arguments as shown, which an approval names back; ``engine._digest``),
    "decision", "reason": str | None, "edits": unified diff | None, "decided_by":
    str | None, "decided_at", "created_at", "due_at", "deferred_until" (the due time a defer put it
    off to), "claimed_by": username | None (a claim in force), "claim_expires_at", "url": the item's
    page}``; times are ISO 8601 strings or None. A cancelled request is ``status`` "resolved" with
    ``decision`` "cancelled" (``decided_by``, ``reason``: who and why), or ``status`` "cancelled"
    with ``decision`` "cancelled" when its whole session was cancelled. ``"approvals"``: under four
    eyes, both approvers in order (``approvals.approvals_json``: ``{"required", "rule",
    "approvers": [{"by", "at", "reason"}]}``; ``decided_by`` names both, "ana and bob"), else None;
    a list passes ``approvals`` looked up for all its rows at once.
    Reads ``row.queue`` and ``row.claimed_by``: select them with the row.
    """
    holder = row.claim_holder(now or timezone.now())
    if approvals is _LOOKUP:
        approvals = approvals_json([row])[row.pk]
    return {
        "id": row.interrupt_id,
        "item_id": row.pk,
        "session_id": row.session_id,
        "workflow": row.workflow or row.session.workflow,
        "title": row.title,
        "kind": row.kind,
        "function_name": row.function_name,
        "status": row.status,
        "queue": row.queue.slug,
        "message": row.message,
        "payload": row.payload,
        "response_schema": row.response_schema,
        "response": row.response,
        "args_digest": (row.metadata or {}).get("args_digest") or None,
        "decision": row.decision,
        "reason": row.reason or None,
        "edits": row.edit_diff or None,
        "decided_by": row.decided_by_label or None,
        "decided_at": _iso(row.decided_at),
        "approvals": approvals,
        "created_at": _iso(row.created_at),
        "due_at": _iso(row.due_at),
        "deferred_until": _iso(row.deferred_until),
        "claimed_by": row.claimed_by.get_username() if holder and row.claimed_by else None,
        "claim_expires_at": _iso(row.claim_expires_at) if holder else None,
        "url": f"/inbox/items/{row.pk}/",
    }


def session_with_items(session: WorkflowSession) -> dict[str, Any]:
    """``workflow_sessions.serializers.session_json`` with ``interrupts``: the session's items
    (:func:`item_json`), oldest first. The API and the console's session JSON answer this."""
    rows = list(Item.objects.filter(session=session).select_related("queue", "session", "claimed_by").order_by("id"))
    return {**session_json(session), "interrupts": items_json(rows)}


def items_json(rows: list[Item]) -> list[dict[str, Any]]:
    """:func:`item_json` of each row, their four eyes looked up together."""
    approvals, now = approvals_json(rows), timezone.now()
    return [item_json(row, now, approvals[row.pk]) for row in rows]


def list_entries(rows: list[Item]) -> list[dict[str, Any]]:
    """:func:`list_entry` of each row, their four eyes looked up together."""
    approvals = approvals_json(rows)
    return [list_entry(row, approvals[row.pk]) for row in rows]


def list_entry(row: Item, approvals: Any = _LOOKUP) -> dict[str, Any]:
    """An item as a reviewer's list shows it (``items.json``, live messages, the item views' JSON).

    :func:`item_json` with ``id`` the row id and ``interrupt_id`` the interrupt's id, plus
    ``snippet`` (the line under the item's title on its page and its row in the list:
    ``headings.heading``'s summary), ``sentence`` (:func:`status_sentence`), ``state``
    (``Item.display_status``), ``queue_id``, ``queue_name``, ``overdue`` and
    ``bulk_approve`` (the interrupt's metadata, else the workflow's setting).
    """
    now = timezone.now()
    data = item_json(row, now, approvals)
    return {
        **data,
        "id": row.pk,
        "interrupt_id": data["id"],
        "queue_id": row.queue_id,
        "queue_name": row.queue.name,
        "state": row.display_status,
        "sentence": status_sentence(row, now, data["approvals"]),
        "snippet": heading(row).summary,
        "overdue": row.is_overdue(now),
        "bulk_approve": allows_bulk_approve(row),
    }


_DONE = {
    "approve": "approved",
    "reject": "rejected",
    "revise": "answered with feedback",
    "answer": "answered",
    CANCELLED: "cancelled",
}


def status_sentence(row: Item, now: dt.datetime | None = None, approvals: dict[str, Any] | None = None) -> str:
    """One sentence on where the item stands, e.g. "This request was approved by alice at … UTC.";
    with ``approvals`` (:func:`item_json`'s), a pending item's first approval under four eyes."""
    now = now or timezone.now()
    if row.status == ItemStatus.CANCELLED and row.decision == SESSION_FAILED:
        return f"The session failed at {_utc(row.decided_at)}, before this request was answered."
    if row.status == ItemStatus.CANCELLED and row.decision == CANCELLED:
        by = f" by {row.decided_by_label}" if row.decided_by_label else ""
        why = f" Reason: {row.reason}" if row.reason else ""
        return f"This request was cancelled{by} at {_utc(row.decided_at)}: its session was cancelled.{why}"
    if row.status == ItemStatus.CANCELLED:
        return f"This request was superseded at {_utc(row.decided_at)}: the session moved on without it."
    if row.status == ItemStatus.RESOLVED:
        if row.decision == "timeout":
            at = _utc(row.expired_at or row.decided_at)
            return f"This request expired at {at}: the workflow went on with a timeout."
        done = _DONE.get(row.decision, "decided")
        by = f" by {row.decided_by_label}" if row.decided_by_label else ""
        why = f" Reason: {row.reason}" if row.decision == CANCELLED and row.reason else ""
        return f"This request was {done}{by} at {_utc(row.decided_at)}.{why}"
    parts = []
    if row.escalated_from_id and row.expired_at:
        parts.append(f"Escalated to {row.queue.name} at {_utc(row.expired_at)}.")
    holder = row.claim_holder(now)
    if holder and row.claimed_by is not None:
        parts.append(f"Claimed by {row.claimed_by.get_username()} since {_utc(row.claimed_at)}.")
    if approvals and approvals["approvers"]:
        first = approvals["approvers"][0]
        at = _utc(dt.datetime.fromisoformat(first["at"]))
        parts.append(f"Approved once, by {first['by']} at {at}: a second, different person must approve.")
    if row.is_overdue(now):
        parts.append(f"Overdue since {_utc(row.due_at)}.")
    elif row.deferred_until is not None and row.deferred_until > now:
        parts.append(f"Deferred until {_utc(row.deferred_until)}.")
    return " ".join(parts) or "Waiting for a decision."
