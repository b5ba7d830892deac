"""The plain-SQL inserts on a new item's path write what the ORM and ``django_tasks_db`` write:
``reviewconsole/sql_insert.insert_instances`` (the item, its queue change, the session row) and
``inbox/task_rows.enqueue_rows`` (the item's expiry and mail task rows in one ``INSERT``)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import IntegrityError, transaction
from django.db.models.signals import post_save
from django.forms.models import model_to_dict
from django.tasks import Task
from django.tasks.signals import task_enqueued
from django.utils import timezone
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult, get_date_max

from reviewconsole.inbox import tasks
from reviewconsole.inbox.models import Item, Queue, QueueChange
from reviewconsole.inbox.task_rows import enqueue_rows
from reviewconsole.sql_insert import insert_instances
from reviewconsole.workflow_sessions.models import WorkflowSession

pytestmark = pytest.mark.django_db

_ROW = ("status", "args_kwargs", "priority", "task_path", "queue_name", "backend_name", "run_after", "worker_ids")


def _columns(row: DBTaskResult) -> dict[str, object]:
    return {name: getattr(row, name) for name in _ROW}


def test_task_rows_are_the_rows_enqueue_writes_and_each_is_announced(monkeypatch):
    backend = DatabaseBackend(alias="default", params={"QUEUES": ["default"]})
    monkeypatch.setattr(Task, "get_backend", lambda self: backend)  # the test suite's is the immediate one
    due = timezone.now() + dt.timedelta(hours=4)
    expire = tasks.expire_interrupt.using(run_after=due)
    announced: list[str] = []

    def heard(sender, task_result, **kwargs):
        announced.append(task_result.id)

    task_enqueued.connect(heard)
    try:
        by_backend = [backend.enqueue(expire, (7,), {}).id, backend.enqueue(tasks.notify_new_item, (7,), {}).id]
        before = timezone.now()
        enqueue_rows(backend, [(expire, (8,)), (tasks.notify_new_item, (8,))])
    finally:
        task_enqueued.disconnect(heard)
    ours = list(DBTaskResult.objects.exclude(pk__in=by_backend).order_by("task_path"))
    theirs = list(DBTaskResult.objects.filter(pk__in=by_backend).order_by("task_path"))
    assert [r.args_kwargs for r in ours] == [{"args": [8], "kwargs": {}}] * 2
    for mine, enqueued in zip(ours, theirs, strict=True):
        assert {**_columns(mine), "args_kwargs": None} == {**_columns(enqueued), "args_kwargs": None}
        assert mine.enqueued_at >= before
    assert ours[1].run_after == get_date_max()  # a mail runs at once: django_tasks_db's pre_save receiver
    assert announced[2:] == [str(r.pk) for r in sorted(ours, key=lambda r: r.task_path)]  # the worker wakes on it


def test_no_task_rows_for_no_calls():
    enqueue_rows(DatabaseBackend(alias="default", params={"QUEUES": ["default"]}), [])
    assert not DBTaskResult.objects.exists()


def test_an_inserted_item_reads_back_as_a_saved_one(start_review):
    _, item = start_review()
    fields = [f.name for f in Item._meta.concrete_fields if f.name not in ("id", "created_at", "session_interrupt")]
    saved = Item.objects.get(pk=item.pk)
    saved.pk, saved.session_interrupt, saved.interrupt_id = None, None, "other"
    copy = Item.objects.get(pk=item.pk)
    copy.pk, copy.session_interrupt, copy.interrupt_id, copy.created_at = None, None, "another", None
    saved.save()
    insert_instances([copy])
    assert copy.pk is not None and not copy._state.adding and copy.created_at is not None  # auto_now_add
    a, b = Item.objects.get(pk=saved.pk), Item.objects.get(pk=copy.pk)
    assert {**model_to_dict(a, fields=fields), "interrupt_id": ""} == {
        **model_to_dict(b, fields=fields),
        "interrupt_id": "",
    }


def test_several_rows_get_their_keys_in_order(demo):
    queue = Queue.objects.get(slug="support")
    rows = [QueueChange(queue_id=queue.pk, version=n, event="interrupt.created") for n in (1, 2, 3)]
    insert_instances(rows)
    stored = list(QueueChange.objects.filter(queue=queue).order_by("pk").values_list("pk", "version"))
    assert stored == [(r.pk, r.version) for r in rows]


def test_one_model_per_statement_and_at_least_one_row(demo):
    queue = Queue.objects.get(slug="support")
    with pytest.raises(ValueError):
        insert_instances([])
    with pytest.raises(ValueError):
        insert_instances([QueueChange(queue_id=queue.pk, version=1, event="e"), queue])


def test_unless_taken_writes_no_second_item_for_an_interrupt_and_says_so(start_review):
    _, item = start_review()
    saved = Item.objects.get(pk=item.pk)
    again = Item.objects.get(pk=item.pk)
    again.pk, again.interrupt_id = None, "relayed-again"
    heard: list[Item] = []

    def saved_signal(sender, instance, created, **kwargs):
        heard.append(instance)

    post_save.connect(saved_signal, sender=Item)
    try:
        assert insert_instances([again], unless_taken="session_interrupt") is False
    finally:
        post_save.disconnect(saved_signal, sender=Item)
    assert again.pk is None and heard == []  # not saved, nobody told it was
    assert list(Item.objects.filter(session_interrupt_id=saved.session_interrupt_id).values_list("pk", flat=True)) == [
        saved.pk
    ]
    fresh = Item.objects.get(pk=item.pk)
    fresh.pk, fresh.session_interrupt, fresh.interrupt_id = None, None, "no-link"
    assert insert_instances([fresh], unless_taken="session_interrupt") is True and fresh.pk is not None


def test_unless_taken_is_for_one_new_row_and_a_unique_field(demo):
    queue = Queue.objects.get(slug="support")
    two = [QueueChange(queue_id=queue.pk, version=n, event="e") for n in (1, 2)]
    with pytest.raises(ValueError):
        insert_instances(two, unless_taken="id")
    with pytest.raises(ValueError):
        insert_instances([QueueChange(queue_id=queue.pk, version=1, event="e")], unless_taken="event")
    assert not QueueChange.objects.filter(queue=queue).exists()


@pytest.mark.django_db(transaction=True)
def test_a_refused_insert_marks_its_atomic_block_for_rollback():
    """As ``save()`` does (found by an attack: a caller catching the ``IntegrityError`` inside an
    atomic block went on; SQLite would have committed the rest, PostgreSQL failed later)."""
    WorkflowSession.objects.create(pk="dup", workflow="email-review", user_id="u")
    with transaction.atomic():
        with pytest.raises(IntegrityError):
            insert_instances([WorkflowSession(pk="dup", workflow="email-review", user_id="u")])
        assert transaction.get_connection().needs_rollback
        transaction.set_rollback(True)
    assert WorkflowSession.objects.filter(pk="dup").count() == 1
