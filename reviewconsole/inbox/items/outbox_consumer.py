"""The inbox as a consumer of the sessions' outbox (``workflow_sessions/outbox.py``).

Runs inside the relay's transaction for each outbox row (registered in ``apps.py``), so what it
writes commits with the row's claim, exactly once; each handler is idempotent anyway (a row
relayed again after a crash finds its work done):

- ``interrupt.opened``: build the item (``assignment.item_row``: queue, due time, search text)
  and insert it in one plain ``INSERT`` (``reviewconsole/sql_insert.py``), unless the session
  interrupt already has one; an approval request is put to the approval policies
  (``policy_decisions.py``: the rule's queue, four eyes, an automatic decision through the
  session service in this transaction); a checkpoint restore's re-opened interrupt keeps the
  queue of its earlier item (unless that one had escalated away). Log ``interrupt.created`` in
  the queue's change log; schedule the expiry of a due item and mail its queue
  (``tasks.item_task_calls``; ``notify_new_item`` records each mail, so a repeat sends none
  twice): on the database task backend in this transaction, both task rows in one ``INSERT``
  (``task_rows.py``: they commit with the item, exactly once, at no commit of their own), on any
  other (the test suite's immediate one runs them at once) after the commit.
- ``interrupt.answered``: mark the pending item resolved with the decision, decider, reason, edit
  diff and response, and refresh its search text (``assignment.item_search_text``); log
  ``interrupt.resolved`` (``interrupt.expired`` for a timeout,
  ``interrupt.cancelled`` for a manager's cancel: decision ``cancelled``); a person's decision
  (not a cancel) is compared with a shadow rule's verdict (``policies/shadow.py``).
- ``interrupt.cancelled``: mark it cancelled (decision ``session_failed`` when its session
  failed; else the decision is left as it is: ``cancelled`` when a door cancelling the session
  said so, ``lifecycle.session_items_cancelled``, else superseded); log ``interrupt.cancelled``.

Live push is the change log's (``changes.py``): published after the relay's transaction commits.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.db import connection, transaction
from django.tasks import Task
from django_tasks_db import DatabaseBackend

from ...policies.shadow import shadow_compare
from ...sql_insert import insert_instances
from ...workflow_sessions.domain_events import DomainEvent, InterruptAnswered, InterruptCancelled, InterruptOpened
from ..live.changes import queue_changes_record
from ..models import CANCELLED, SESSION_FAILED, Item, ItemStatus
from ..task_rows import enqueue_rows
from ..tasks import item_task_calls, notify_new_item
from .assignment import item_row, item_search_text
from .policy_decisions import policy_apply, policy_verdict
from .policy_gate import APPROVAL_KINDS

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
    row = item_row(event)
    verdict = policy_verdict(row)  # an approval policy may name the queue
    if event.restored:
        earlier = (
            Item.objects.filter(session_id=event.session_id, interrupt_id=row.interrupt_id)
            .order_by("-id")
            .values_list("queue_id", "escalated_from_id")
            .first()
        )
        if earlier is not None and earlier[1] is None:
            row.queue_id = earlier[0]  # a manager's reassignment holds; an escalation does not
    # Plain SQL, as save() writes it (Item has no save() override); none when the interrupt has
    # its item already (the event relayed again), found by the INSERT itself.
    if not insert_instances([row], unless_taken="session_interrupt"):
        return
    queue_changes_record(changes=[(row.queue_id, "interrupt.created", row.pk)])
    if verdict is not None:
        policy_apply(row, verdict)  # an automatic decision is an answer in this transaction
    pk, calls = row.pk, item_task_calls(row.pk, row.due_at)
    backend = notify_new_item.get_backend()
    if isinstance(backend, DatabaseBackend):
        # No try: a failure rolls the relay's transaction back and the row is relayed again.
        enqueue_rows(backend, calls)
    else:
        transaction.on_commit(lambda: _after_open(pk, calls), robust=True)


def _after_open(pk: int, calls: list[tuple[Task[Any, Any], tuple[int]]]) -> None:
    """Enqueue the item's tasks after the commit (a backend that runs them at once); a failure is
    logged (an expiry not scheduled is still found by the sweep, ``manage.py expire_items``)."""
    for task, args in calls:
        try:
            task.enqueue(*args)
        except Exception:
            logger.exception("Could not enqueue %s for item %s", task.name, pk)


def _answered(event: InterruptAnswered) -> None:
    fields = {
        "status": ItemStatus.RESOLVED,
        "response": event.response,
        "decision": event.decision,
        "reason": event.reason,
        "edit_diff": event.edit_diff,
        "decided_by_id": event.decided_by_id,
        "decided_by_label": event.decided_by,
        "decided_at": dt.datetime.fromisoformat(event.decided_at),
    }
    item = _close_pending(event.interrupt_pk, fields)
    if item is not None and item[2] in APPROVAL_KINDS:  # only a tool call's heading names its decision
        _search_text_refresh(item[0])
    compared = event.decided_by_id is not None and event.decision != "cancelled"  # a cancel is no verdict
    if compared and (item is None or item[2] in APPROVAL_KINDS):  # only approval requests have verdicts
        shadow_compare(event.interrupt_pk, event.decision)  # a person's decision beside a shadow rule's
    if item is not None:
        change = (
            "interrupt.expired"
            if event.timeout
            else "interrupt.cancelled"
            if event.decision == CANCELLED
            else "interrupt.resolved"
        )
        queue_changes_record(changes=[(item[1], change, item[0])])


def _search_text_refresh(pk: int) -> None:
    """Write a decided tool call's search text again: its row's title and summary may name the
    decision now (the edited arguments that ran, "approved by policy"). Other kinds' headings are
    the request's own and do not change with it, so their decision costs no read here (it was 30 %
    of a resume's CPU in ``bench.ours``)."""
    row = Item.objects.get(pk=pk)
    text = item_search_text(row)
    if text != row.search_text:
        Item.objects.filter(pk=pk).update(search_text=text)


def _cancelled(event: InterruptCancelled) -> None:
    fields: dict[str, Any] = {"status": ItemStatus.CANCELLED, "decided_at": dt.datetime.fromisoformat(event.decided_at)}
    if event.cause == SESSION_FAILED:
        fields["decision"] = SESSION_FAILED
    # Else the decision stays as it is: "" (superseded), or "cancelled" with who and why, set by
    # the door that cancelled the session (lifecycle.session_items_cancelled).
    item = _close_pending(event.interrupt_pk, fields)
    if item is not None:
        queue_changes_record(changes=[(item[1], "interrupt.cancelled", item[0])])


def _close_pending(interrupt_pk: int, fields: dict[str, Any]) -> tuple[int, int, str] | None:
    """Set ``fields`` on the pending item of the session interrupt ``interrupt_pk``; its
    ``(pk, queue_id, kind)``, or None when it has none pending (never opened, or already closed).

    One ``UPDATE … RETURNING`` (SQLite 3.35+, PostgreSQL) instead of a read and an update: every
    decision goes through here. Values are adapted by the model's fields, as the ORM does.
    """
    meta, quote = Item._meta, connection.ops.quote_name
    assignments = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in fields)
    values = [meta.get_field(name).get_db_prep_save(value, connection) for name, value in fields.items()]
    pk, queue, kind, link, status = (
        quote(meta.get_field(name).column) for name in ("id", "queue", "kind", "session_interrupt", "status")
    )
    sql = (
        f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {link} = %s AND {status} = %s "  # noqa: S608 (names from the model, values as parameters)
        f"RETURNING {pk}, {queue}, {kind}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, interrupt_pk, ItemStatus.PENDING.value])
        row = cursor.fetchone()
    return None if row is None else (int(row[0]), int(row[1]), str(row[2]))
