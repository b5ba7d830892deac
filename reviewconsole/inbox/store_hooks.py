"""What the inbox does inside the engine store's transactions (``workflow_sessions/store.py``).

- :func:`interrupts_committed`: a run's commit opened or cancelled interrupts: log the queue
  changes now, and after the commit schedule each due item's expiry and email its queue.
- :func:`interrupts_answered`: answers resolved interrupts: log the changes.
- :func:`decision_guard` / :func:`guard_refusal`: the extra conditions a reviewer's decision
  adds to the store's conditional UPDATE (still in the queue the permission check saw, claim held
  by someone else, expired), and the 409 that says which one refused it. Only decisions that
  carry ``context["guard"]`` (the inbox's) are guarded; systems resuming through the API are not.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.db import transaction
from django.db.models import Q

from .changes import queue_changes_record
from .models import Interrupt, InterruptStatus, OnExpiry

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["decision_guard", "guard_refusal", "interrupts_answered", "interrupts_committed", "reset_for_reopen"]


def interrupts_committed(*, opened: list[Interrupt], cancelled: list[int]) -> None:
    """Log ``interrupt.created`` / ``interrupt.cancelled``; after commit, schedule expiry and mail."""
    gone = list(Interrupt.objects.filter(pk__in=cancelled).values_list("queue_id", "pk"))
    queue_changes_record(
        changes=[(r.queue_id, "interrupt.created", r.pk) for r in opened]
        + [(queue_id, "interrupt.cancelled", pk) for queue_id, pk in gone]
    )
    due = [(r.pk, r.due_at) for r in opened if r.due_at is not None]
    new = [r.pk for r in opened]
    if new:
        transaction.on_commit(lambda: _after_open(new, due), robust=True)


def _after_open(new: list[int], due: list[tuple[int, dt.datetime]]) -> None:
    from .tasks import notify_new_item, schedule_expiry

    for pk, due_at in due:
        try:
            schedule_expiry(pk, due_at)
        except Exception:  # the sweep (manage.py expire_items) still finds it
            logger.exception("Could not schedule the expiry of item %s", pk)
    for pk in new:
        try:
            notify_new_item.enqueue(pk)
        except Exception:
            logger.exception("Could not enqueue the notification of item %s", pk)


def interrupts_answered(*, resolved: list[int], context: dict[str, Any]) -> None:
    """Log ``interrupt.resolved`` (``interrupt.expired`` for a timeout) for these rows."""
    event = "interrupt.expired" if context.get("decision") == "timeout" else "interrupt.resolved"
    rows = Interrupt.objects.filter(pk__in=resolved).values_list("queue_id", "pk")
    queue_changes_record(changes=[(queue_id, event, pk) for queue_id, pk in rows])


def decision_guard(context: dict[str, Any], now: dt.datetime) -> Q:
    """Conditions a guarded decision adds to ``status='pending'`` (``Q()`` when unguarded).

    ``guard["queue_id"]`` is the queue the decider's permission check saw: an item moved since
    (reassigned, or escalated) is refused, also in the "escalated: decided in its new queue" branch.
    """
    guard = context.get("guard")
    if not guard:
        return Q()
    # The race this guards: a manager moves the item to a queue the decider is not in between
    # the decider's membership check and this UPDATE.
    same_queue = Q(queue_id=guard["queue_id"])
    not_expired = (
        Q(due_at__isnull=True)
        | Q(due_at__gt=now)
        | Q(on_expiry=OnExpiry.NOTHING)
        | Q(on_expiry=OnExpiry.ESCALATE, expired_at__isnull=False)  # escalated: decided in its new queue
    )
    if guard.get("override_claim"):
        return same_queue & not_expired
    free = Q(claimed_by__isnull=True) | Q(claimed_by_id=guard["user_id"]) | Q(claim_expires_at__lte=now)
    return same_queue & not_expired & free


def guard_refusal(session_id: str, interrupt_id: str, context: dict[str, Any], now: dt.datetime) -> None:
    """Raise the 409 for a guarded decision whose UPDATE changed nothing, if the guard refused it.

    Raises:
        MovedError: a manager moved the item to another queue since the permission check.
        ClaimConflictError: someone else holds the claim.
        ExpiredError: the due time passed and the item expires (escalates or times out), or it
            escalated away from the queue the decider saw.
    """
    guard = context.get("guard")
    if not guard:
        return
    row = (
        Interrupt.objects.select_related("claimed_by")
        .filter(session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING)
        .first()
    )
    if row is None:
        return
    from .refusals import claimed_conflict, expired_conflict, moved_conflict

    if row.queue_id != guard["queue_id"]:
        if row.expired_at is not None and row.escalated_from_id == guard["queue_id"]:
            raise expired_conflict(row)
        raise moved_conflict(row)
    holder = row.claim_holder(now)
    if holder and holder != guard["user_id"] and not guard.get("override_claim"):
        raise claimed_conflict(row)
    if row.due_at is not None and row.due_at <= now and row.on_expiry and row.expired_at is None:
        raise expired_conflict(row)


def reset_for_reopen(row: Interrupt, now: dt.datetime) -> None:
    """Make a copy of a decided row a fresh pending item (a checkpoint restore reopens it):
    no claim, no reason, diff or expiry of the old one, a due time counted from ``now``, and its
    workflow's queue again if it had escalated away."""
    from .expiry import due_fields
    from .routing import queue_for

    row.claimed_by = None
    row.claimed_at = None
    row.claim_expires_at = None
    row.expired_at = None
    row.reason = ""
    row.edit_diff = ""
    if row.escalated_from_id:
        row.queue = queue_for(row.workflow, dict(row.metadata or {}))
        row.escalated_from = None
    for name, value in due_fields(row.workflow, dict(row.metadata or {}), now).items():
        setattr(row, name, value)
