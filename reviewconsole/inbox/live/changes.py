"""Each queue's change log: versions that let a client catch up with exactly what it missed.

Every change to a queue's items goes through :func:`queue_changes_record`, inside the transaction
that makes the change (the engine store's commits and answers, claims, expiry). It bumps the
queue's ``version`` with a conditional ``UPDATE`` (on PostgreSQL the row lock orders concurrent
changes of one queue, so versions are gap-free and commit in order), appends a
:class:`~reviewconsole.inbox.models.QueueChange` (one plain ``INSERT``, ``reviewconsole/sql_insert.py``:
every new and every decided item comes through here), and publishes it to the queue's Channels group
once the transaction commits. Call it last in a transaction and for several queues in one go:
queue rows are locked in id order, so two transactions never wait on each other's queues.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from ...sql_insert import insert_instances
from ..conf import inbox_setting
from ..models import Queue, QueueChange
from .messages import publish_changes

__all__ = ["MAX_CATCH_UP", "changes_since", "current_versions", "queue_changes_prune", "queue_changes_record"]

MAX_CATCH_UP = 500
"""More missed changes than this and the client takes a fresh snapshot instead."""


def queue_changes_record(*, changes: Iterable[tuple[int, str, int | None]]) -> list[QueueChange]:
    """Append ``(queue_id, event, item_pk)`` changes, each with its queue's next version.

    Must run inside the transaction of the change; the changes are published to the queues'
    groups after that transaction commits.
    """
    todo = sorted(changes, key=lambda c: c[0])  # stable: keeps the order within one queue
    if not todo:
        return []
    created: list[QueueChange] = []
    with transaction.atomic(savepoint=False):
        for queue_id, event, item_pk in todo:
            # The race this guards: two transactions changing one queue. The UPDATE takes the
            # queue row's lock, so the second waits and reads the first's version.
            version = _next_version(queue_id)
            created.append(QueueChange(queue_id=queue_id, version=version, event=event, item_id=item_pk))
        insert_instances(created)  # one plain INSERT (QueueChange has no save() override)
    ids = [(c.pk, c.queue_id) for c in created]

    def publish() -> None:
        publish_changes(ids)

    transaction.on_commit(publish, robust=True)
    return created


def _next_version(queue_id: int) -> int:
    """Bump the queue's version and return it (one ``UPDATE … RETURNING``)."""
    table = connection.ops.quote_name(Queue._meta.db_table)
    column = connection.ops.quote_name("version")
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET {column} = {column} + 1 WHERE id = %s RETURNING {column}",  # noqa: S608 (names from the model)
            [queue_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise Queue.DoesNotExist(f"No queue {queue_id}.")
    return int(row[0])


def current_versions(queue_ids: Iterable[int]) -> dict[int, int]:
    """``{queue_id: version}`` now; read *before* a snapshot so nothing after it is missed."""
    return dict(Queue.objects.filter(pk__in=list(queue_ids)).values_list("pk", "version"))


def changes_since(queues: QuerySet[Queue], since: dict[int, int]) -> dict[str, Any]:
    """What changed in ``queues`` after the versions in ``since``.

    Returns ``{"changes": [QueueChange…], "versions": {queue_id: version}, "reset": bool}``;
    ``reset`` is true (and ``changes`` empty) when the client must take a fresh snapshot: it
    missed more than :data:`MAX_CATCH_UP` changes, or some were pruned from the log, or it names
    no version for one of its queues.
    """
    versions = dict(queues.values_list("pk", "version"))
    found: list[QueueChange] = []
    for queue_id, version in versions.items():
        known = since.get(queue_id)
        if known is None or known > version:
            return {"changes": [], "versions": versions, "reset": True}
        if known == version:
            continue
        rows = list(
            QueueChange.objects.filter(queue_id=queue_id, version__gt=known, version__lte=version)
            .order_by("version")
            .select_related("item__queue", "item__claimed_by")[: MAX_CATCH_UP + 1]
        )
        if not rows or rows[0].version != known + 1:  # pruned: the log no longer reaches back
            return {"changes": [], "versions": versions, "reset": True}
        found.extend(rows)
        if len(found) > MAX_CATCH_UP:
            return {"changes": [], "versions": versions, "reset": True}
    found.sort(key=lambda c: (c.at, c.queue_id, c.version))
    return {"changes": found, "versions": versions, "reset": False}


def queue_changes_prune(*, now: dt.datetime | None = None) -> int:
    """Delete changes older than ``CHANGE_LOG_DAYS`` (keeping each queue's newest); returns how many."""
    cutoff = (now or timezone.now()) - dt.timedelta(days=inbox_setting("CHANGE_LOG_DAYS"))
    newest = {qid: v for qid, v in Queue.objects.values_list("pk", "version")}
    deleted = 0
    for queue_id, version in newest.items():
        deleted += QueueChange.objects.filter(queue_id=queue_id, at__lt=cutoff, version__lt=version).delete()[0]
    return deleted
