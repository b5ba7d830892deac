"""The inbox as a consumer of the sessions' outbox (``workflow_sessions/outbox.py``).

Runs inside the relay's transaction for each outbox row (registered in ``apps.py``), so what it
writes commits with the row's claim, exactly once; each handler is idempotent anyway (a row
relayed again after a crash finds its work done):

- ``interrupt.opened``: build and save the item (``assignment.item_row``: queue, due time,
  search text), unless the session interrupt already has one; a checkpoint restore's re-opened
  interrupt keeps the queue of its earlier item (unless that one had escalated away). Log
  ``interrupt.created`` in the queue's change log; after the commit schedule the expiry of a due
  item and mail its queue (``notify_new_item`` records each mail, so a repeat sends none twice).
- ``interrupt.answered``: mark the pending item resolved with the decision, decider, reason, edit
  diff and response; log ``interrupt.resolved`` (``interrupt.expired`` for a timeout).
- ``interrupt.cancelled``: mark it cancelled (decision ``session_failed`` when its session
  failed); log ``interrupt.cancelled``.

Live push is the change log's (``changes.py``): published after the relay's transaction commits.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db import transaction

from ...workflow_sessions.domain_events import DomainEvent, InterruptAnswered, InterruptCancelled, InterruptOpened
from ..live.changes import queue_changes_record
from ..models import SESSION_FAILED, Item, ItemStatus
from ..tasks import notify_new_item, schedule_expiry
from .assignment import item_row

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["inbox_consume", "inbox_wants"]


def inbox_wants(event: DomainEvent) -> bool:
    """The inbox acts on interrupts only (a session's end changes no item)."""
    return isinstance(event, InterruptOpened | InterruptAnswered | InterruptCancelled)


def inbox_consume(event: DomainEvent, outbox_id: int) -> None:
    """Apply ``event`` (outbox row ``outbox_id``) to the inbox's items; see the module docstring."""
    if isinstance(event, InterruptOpened):
        _opened(event)
    elif isinstance(event, InterruptAnswered):
        _answered(event)
    elif isinstance(event, InterruptCancelled):
        _cancelled(event)


def _opened(event: InterruptOpened) -> None:
    if Item.objects.filter(session_interrupt_id=event.interrupt_pk).exists():
        return  # relayed again: the item is there
    row = item_row(event)
    if event.restored:
        earlier = (
            Item.objects.filter(session_id=event.session_id, interrupt_id=row.interrupt_id)
            .order_by("-id")
            .values_list("queue_id", "escalated_from_id")
            .first()
        )
        if earlier is not None and earlier[1] is None:
            row.queue_id = earlier[0]  # a manager's reassignment holds; an escalation does not
    row.save()
    queue_changes_record(changes=[(row.queue_id, "interrupt.created", row.pk)])
    pk, due_at = row.pk, row.due_at
    transaction.on_commit(lambda: _after_open(pk, due_at), robust=True)


def _after_open(pk: int, due_at: dt.datetime | None) -> None:
    if due_at is not None:
        try:
            schedule_expiry(pk, due_at)
        except Exception:  # the sweep (manage.py expire_items) still finds it
            logger.exception("Could not schedule the expiry of item %s", pk)
    try:
        notify_new_item.enqueue(pk)
    except Exception:
        logger.exception("Could not enqueue the notification of item %s", pk)


def _answered(event: InterruptAnswered) -> None:
    item = Item.objects.filter(session_interrupt_id=event.interrupt_pk).values_list("pk", "queue_id").first()
    if item is None:
        return
    changed = Item.objects.filter(pk=item[0], status=ItemStatus.PENDING).update(
        status=ItemStatus.RESOLVED,
        response=event.response,
        decision=event.decision,
        reason=event.reason,
        edit_diff=event.edit_diff,
        decided_by_id=event.decided_by_id,
        decided_by_label=event.decided_by,
        decided_at=dt.datetime.fromisoformat(event.decided_at),
    )
    if changed:
        change = "interrupt.expired" if event.timeout else "interrupt.resolved"
        queue_changes_record(changes=[(item[1], change, item[0])])


def _cancelled(event: InterruptCancelled) -> None:
    item = Item.objects.filter(session_interrupt_id=event.interrupt_pk).values_list("pk", "queue_id").first()
    if item is None:
        return
    changed = Item.objects.filter(pk=item[0], status=ItemStatus.PENDING).update(
        status=ItemStatus.CANCELLED,
        decided_at=dt.datetime.fromisoformat(event.decided_at),
        decision=SESSION_FAILED if event.cause == SESSION_FAILED else "",
    )
    if changed:
        queue_changes_record(changes=[(item[1], "interrupt.cancelled", item[0])])
