"""Tasks of the inbox, on the configured ``django.tasks`` backend.

- ``expire_interrupt(pk)``: enqueued with ``run_after=due_at`` when a due item is created
  (:func:`schedule_expiry`); the database worker runs it within its poll interval of the due
  time. Backends that cannot defer (the test suite's immediate backend) skip it; the sweep
  ``manage.py expire_items`` covers them and any task lost on the way.
- ``notify_new_item(pk)``: emails the queue's members about a new item; queued by
  :func:`notify_enqueue`, which queues nothing while new-item mails are off (``NOTIFY_EMAIL``).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.tasks import Task, task

from .conf import inbox_setting
from .items.expiry import interrupt_expire
from .mail.notifications import notify_members
from .models import Item

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["expire_interrupt", "item_task_calls", "notify_enqueue", "notify_new_item", "schedule_expiry"]


@task()
def expire_interrupt(interrupt_pk: int) -> str:
    """Expire item ``interrupt_pk`` if it is due (see ``expiry.interrupt_expire``); returns the outcome.

    A task that runs early (clock skew between machines) re-enqueues itself for the due time.
    """
    outcome = interrupt_expire(pk=interrupt_pk)
    if outcome == "not_due":
        due_at = Item.objects.filter(pk=interrupt_pk).values_list("due_at", flat=True).first()
        if due_at is not None:
            schedule_expiry(interrupt_pk, due_at)
    return outcome


def schedule_expiry(pk: int, due_at: dt.datetime) -> bool:
    """Enqueue ``expire_interrupt(pk)`` to run at ``due_at``; False if the backend cannot defer."""
    if not expire_interrupt.get_backend().supports_defer:
        return False
    expire_interrupt.using(run_after=due_at).enqueue(pk)
    return True


@task()
def notify_new_item(interrupt_pk: int) -> int:
    """Email the members of the item's queue; returns how many emails were sent."""
    item = Item.objects.select_related("queue").filter(pk=interrupt_pk).first()
    if item is None or item.status != "pending":
        return 0
    return notify_members(item)


def notify_enqueue(pk: int) -> None:
    """Queue ``notify_new_item(pk)`` unless new-item mails are off (``NOTIFY_EMAIL``): a task that
    would mail nobody is not queued (each costs a worker's claim, run and record)."""
    if inbox_setting("NOTIFY_EMAIL"):
        notify_new_item.enqueue(pk)


def item_task_calls(pk: int, due_at: dt.datetime | None) -> list[tuple[Task[Any, Any], tuple[int]]]:
    """The ``(task, args)`` a new item ``pk`` enqueues: its expiry at ``due_at`` (when due and the
    backend can defer it, as :func:`schedule_expiry`), its mail unless new-item mails are off (as
    :func:`notify_enqueue`)."""
    calls: list[tuple[Task[Any, Any], tuple[int]]] = []
    if due_at is not None and expire_interrupt.get_backend().supports_defer:
        calls.append((expire_interrupt.using(run_after=due_at), (pk,)))
    if inbox_setting("NOTIFY_EMAIL"):
        calls.append((notify_new_item, (pk,)))
    return calls
