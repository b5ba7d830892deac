"""Tasks enqueued on ``django_tasks_db``'s database backend as one multi-row ``INSERT``.

``DatabaseBackend.enqueue`` writes each task's row with ``DBTaskResult.objects.create`` (the
ORM's query building, once per row: a new item's expiry and mail tasks were about a fifth of
its relay in ``bench.ours``). :func:`enqueue_rows` builds the same rows as the backend does
(its id function, ``normalize_json`` of the arguments, the task's priority, queue, path and
``run_after``, the backend's alias), checks each task as ``enqueue`` does (``validate_task``),
writes them in one statement (``reviewconsole.sql_insert``; ``DBTaskResult`` has no ``save()``
override or signal acting on an insert) and sends ``task_enqueued`` for each, as ``enqueue``
does (the console's worker wakes on it). Nothing here commits: the rows commit with the
caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.tasks import Task
from django.tasks.signals import task_enqueued
from django.utils.json import normalize_json
from django_tasks_db import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from ..sql_insert import insert_instances

__all__ = ["enqueue_rows"]


def enqueue_rows(backend: DatabaseBackend, calls: Sequence[tuple[Task[Any, Any], tuple[Any, ...]]]) -> None:
    """Enqueue each ``(task, args)`` of ``calls`` on ``backend``, in one ``INSERT``; nothing for none.

    Raises:
        InvalidTask: a task the backend cannot run (as ``enqueue``); nothing is written.
        IntegrityError: a row was refused; nothing of the statement is written.
    """
    if not calls:
        return
    rows: list[DBTaskResult[Any, Any]] = []
    for task, args in calls:
        backend.validate_task(task)
        rows.append(
            DBTaskResult(
                id=backend._get_id(),
                args_kwargs=normalize_json({"args": args, "kwargs": {}}),
                priority=task.priority,
                task_path=task.module_path,
                queue_name=task.queue_name,
                run_after=task.run_after,
                backend_name=backend.alias,
            )
        )
    insert_instances(rows)
    for row in rows:
        task_enqueued.send(type(backend), task_result=row.task_result)
