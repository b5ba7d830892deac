"""Due times and what happens when they pass.

An item's due time comes from, in order: its interrupt's ``metadata`` (``due_in_seconds``,
``on_expiry``, ``escalate_to``, as in ``RequestInput(metadata={"due_in_seconds": 5, "on_expiry":
"escalate", "escalate_to": "support-leads"})``), the ``EXPIRY`` setting for its workflow, or the
workflow's own spec (``WorkflowSpec.due_in_seconds`` …). Without one, the item never expires.

When the due time passes, :func:`interrupt_expire` (run by the ``expire_interrupt`` task, which
is enqueued with ``run_after=due_at`` when the item is created) does what the item declares:

- ``escalate``: the item moves to the ``escalate_to`` queue (triage if that queue is missing),
  keeps its due time (so it stays overdue and first in the new queue), loses its claim, and
  reviewers of the old queue get a 409 "expired … escalated" when they try to decide it;
- ``timeout``: the workflow resumes with the documented timeout payload (:func:`timeout_payload`)
  decided by ``system (expired)``; a later decision gets a 409 "expired";
- nothing (``on_expiry`` empty): the item stays, highlighted as overdue and sorted first.

Both paths are conditional updates on the pending, not-yet-expired row, so expiry runs once even
when the task runs twice or races a reviewer (whoever changes the row first wins).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from engine import AlreadyDecidedError, AnswerInvalidError, Decision, EngineError, InterruptKind

from ...audit.services import audit_record
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync
from ...workflows import UnknownWorkflowError, get
from ..conf import inbox_setting
from ..live.changes import queue_changes_prune, queue_changes_record
from ..models import Item, ItemStatus, OnExpiry, Queue

logger = logging.getLogger("reviewconsole.inbox")

__all__ = [
    "SYSTEM_DECIDER",
    "due_fields",
    "expire_due_interrupts",
    "inbox_sweep",
    "interrupt_expire",
    "timeout_payload",
]

SYSTEM_DECIDER = "system (expired)"


def timeout_payload(kind: str) -> dict[str, Any]:
    """The answer a workflow receives when an item of ``kind`` times out.

    ``{"timeout": true}`` for input, ``{"confirmed": false, "timeout": true}`` for tool
    confirmations, ``{"status": "timeout"}`` for long-running tools.
    """
    if kind == InterruptKind.CONFIRMATION:
        return {"confirmed": False, "timeout": True}
    if kind == InterruptKind.LONG_RUNNING:
        return {"status": "timeout"}
    return {"timeout": True}


def _declared(workflow: str, metadata: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    try:
        spec = get(workflow)
        found = {"due_in_seconds": spec.due_in_seconds, "on_expiry": spec.on_expiry, "escalate_to": spec.escalate_to}
    except UnknownWorkflowError:
        pass
    found.update((inbox_setting("EXPIRY") or {}).get(workflow, {}))
    found.update({k: metadata[k] for k in ("due_in_seconds", "on_expiry", "escalate_to") if k in metadata})
    return found


def due_fields(workflow: str, metadata: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """``due_at``, ``on_expiry`` and ``escalate_to`` for a new item (see the module docstring).

    Unknown ``on_expiry`` values and non-positive or non-numeric due times are ignored (logged):
    a workflow's typo must not keep an item from the inbox.
    """
    declared = _declared(workflow, metadata)
    seconds = declared.get("due_in_seconds")
    try:
        seconds = float(seconds) if seconds is not None else None
    except (TypeError, ValueError):
        logger.warning("Ignoring due_in_seconds=%r of workflow %s", seconds, workflow)
        seconds = None
    if seconds is None or seconds <= 0:
        return {"due_at": None, "on_expiry": "", "escalate_to": ""}
    on_expiry = declared.get("on_expiry") or ""
    if on_expiry not in OnExpiry.values:
        logger.warning("Ignoring on_expiry=%r of workflow %s", on_expiry, workflow)
        on_expiry = ""
    return {
        "due_at": now + dt.timedelta(seconds=seconds),
        "on_expiry": on_expiry,
        "escalate_to": str(declared.get("escalate_to") or "")[:50],
    }


def interrupt_expire(*, pk: int, now: dt.datetime | None = None) -> str:
    """Run the expiry of item ``pk`` if it is due; returns what happened.

    ``"escalated"``, ``"timed_out"``, ``"marked"`` (overdue, nothing declared), ``"not_due"``
    (its due time is later, or it has none), ``"done"`` (decided, cancelled or expired already:
    someone got there first).
    """
    now = now or timezone.now()
    row = Item.objects.select_related("queue", "session").filter(pk=pk).first()
    if row is None or row.status != ItemStatus.PENDING or row.expired_at is not None:
        return "done"
    if row.due_at is None or row.due_at > now:
        return "not_due"
    if row.on_expiry == OnExpiry.TIMEOUT:
        return _time_out(row, now)
    if row.on_expiry == OnExpiry.ESCALATE:
        return _escalate(row, now)
    with transaction.atomic():
        if not _mark_expired(row, now):
            return "done"
        audit_record(action="interrupt.expire", actor="system", target=row, detail={"on_expiry": "none"})
        queue_changes_record(changes=[(row.queue_id, "interrupt.expired", row.pk)])
    return "marked"


def _mark_expired(row: Item, now: dt.datetime, **changes: Any) -> bool:
    # The race this guards: the task running twice, or a reviewer deciding at the due time.
    # Only the UPDATE that still finds the row pending and not yet expired changes it.
    changed = Item.objects.filter(
        pk=row.pk, status=ItemStatus.PENDING, expired_at__isnull=True, due_at=row.due_at
    ).update(expired_at=now, **changes)
    return changed == 1


def _escalate(row: Item, now: dt.datetime) -> str:
    from .assignment import triage_queue  # assignment imports this module (due_fields)

    target = Queue.objects.filter(slug=row.escalate_to).first() if row.escalate_to else None
    if target is None:
        logger.warning("Queue %r to escalate item %s to does not exist; escalating to triage", row.escalate_to, row.pk)
        target = triage_queue()
    if target.pk == row.queue_id:  # escalated there already (by a reviewer): it stays, overdue
        with transaction.atomic():
            if not _mark_expired(row, now):
                return "done"
            audit_record(action="interrupt.expire", actor="system", target=row, detail={"on_expiry": "escalate"})
            queue_changes_record(changes=[(row.queue_id, "interrupt.expired", row.pk)])
        return "marked"
    with transaction.atomic():
        moved = _mark_expired(
            row,
            now,
            queue=target,
            escalated_from=row.queue,
            claimed_by=None,
            claimed_at=None,
            claim_expires_at=None,
        )
        if not moved:
            return "done"
        audit_record(
            action="interrupt.escalate",
            actor="system",
            target=row,
            before={"queue": row.queue.slug},
            after={"queue": target.slug},
            detail={"due_at": row.due_at.isoformat() if row.due_at else None},
        )
        queue_changes_record(
            changes=[(row.queue_id, "interrupt.escalated", row.pk), (target.pk, "interrupt.created", row.pk)]
        )
        transaction.on_commit(lambda: _notify(row.pk), robust=True)
    return "escalated"


def _notify(pk: int) -> None:
    from ..tasks import notify_enqueue  # the tasks module imports this one (interrupt_expire)

    notify_enqueue(pk)


def _time_out(row: Item, now: dt.datetime) -> str:
    payload = timeout_payload(row.kind)
    try:
        with transaction.atomic():
            interrupt_answer_sync(
                row.session,
                {row.interrupt_id: payload},
                decided_by=SYSTEM_DECIDER,
                decisions={row.interrupt_id: Decision(kind="timeout")},
            )
            Item.objects.filter(pk=row.pk).update(expired_at=now)
            audit_record(action="interrupt.expire", actor="system", target=row, after={"response": payload})
            enqueue_run(row.session_id)
    except AlreadyDecidedError:
        return "done"
    except (AnswerInvalidError, EngineError, LookupError) as exc:
        # The workflow cannot take a timeout for this item (e.g. its schema refuses
        # {"timeout": true}): keep the item, escalated to triage, rather than lose it.
        logger.error("Item %s could not time out (%s); escalating it to triage", row.pk, exc)
        row.escalate_to = ""
        return _escalate(row, now)
    return "timed_out"


def expire_due_interrupts(*, now: dt.datetime | None = None, limit: int = 500) -> dict[str, int]:
    """Expire every pending item whose due time has passed (the sweep behind the tasks).

    Returns how many items each outcome had. Safe to run at any time and from several
    processes: each item's expiry is a conditional update.
    """
    now = now or timezone.now()
    due = Item.objects.filter(status=ItemStatus.PENDING, expired_at__isnull=True, due_at__lte=now)
    outcomes: dict[str, int] = {}
    for pk in due.order_by("due_at").values_list("pk", flat=True)[:limit]:
        outcome = interrupt_expire(pk=pk, now=now)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


_last_prune = float("-inf")
PRUNE_EVERY = 3600.0
"""Seconds between prunes of the queues' change logs by :func:`inbox_sweep`."""


def inbox_sweep() -> dict[str, int]:
    """The safety net every worker's recovery loop runs: expire whatever is due (a task lost on
    the way, a backend without ``run_after``) and, once an hour, prune old queue changes."""
    global _last_prune
    outcomes = expire_due_interrupts()
    if time.monotonic() - _last_prune > PRUNE_EVERY:
        _last_prune = time.monotonic()
        outcomes["pruned"] = queue_changes_prune()
    return outcomes
