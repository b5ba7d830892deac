"""A new item's task rows written in one ``INSERT`` by the outbox relay (``inbox/task_rows.py``) are
claimed and run by the console's worker as an enqueued task's row is, once; a relay of the same
outbox row again adds none (from an attack on the plain inserts, which held)."""

from __future__ import annotations

import pytest
from django.core import mail
from django.tasks import Task
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from reviewconsole.console.worker import ThreadWorker, task_runner
from reviewconsole.inbox.items import outbox_consumer
from reviewconsole.inbox.models import Item, NotificationSent
from reviewconsole.workflow_sessions.models import OutboxEvent
from reviewconsole.workflow_sessions.outbox import row_event
from tests.conftest import post_webhook

QUEUES = ["default", "outbound"]


@pytest.fixture
def database_backend(monkeypatch, settings):
    """Every task on the database backend (the suite runs them at once otherwise)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": QUEUES}}
    backend = DatabaseBackend(alias="default", params={"QUEUES": QUEUES})
    monkeypatch.setattr(Task, "get_backend", lambda self: backend)
    return backend


def test_a_relayed_task_row_runs_once(database_backend, demo, client, on_commit):
    runner, worker = task_runner("w/0"), ThreadWorker(count=1)
    mail.outbox.clear()
    with on_commit():
        assert post_webhook(client, {"complaint": "Order #5 arrived late."}).status_code == 202
    runs = 0
    with on_commit():  # the session's run: its pause relays the new item, which writes the task rows
        while run := DBTaskResult.objects.ready().filter(task_path__endswith="run_session").first():
            claimed = worker._claim("w/0", "default", str(run.pk))
            assert claimed is not None and claimed.pk == run.pk
            runner.run_task(claimed)
            runs += 1
    assert runs == 1
    item = Item.objects.get()
    rows = list(DBTaskResult.objects.filter(task_path__endswith="notify_new_item"))
    assert [row.args_kwargs for row in rows] == [{"args": [item.pk], "kwargs": {}}]
    before = DBTaskResult.objects.count()
    opened = OutboxEvent.objects.filter(kind="interrupt.opened").latest("id")
    outbox_consumer.inbox_consume(row_event(opened.kind, opened.data), opened.pk)  # relayed again
    assert DBTaskResult.objects.count() == before
    claimed = worker._claim("w/0", "default", str(rows[0].pk))
    assert claimed is not None and claimed.pk == rows[0].pk
    with on_commit():
        runner.run_task(claimed)
    claimed.refresh_from_db()
    assert (claimed.status, claimed.return_value) == ("SUCCESSFUL", 2), claimed.traceback
    assert sorted(m.to[0] for m in mail.outbox) == ["manager@example.com", "reviewer@example.com"]
    assert NotificationSent.objects.filter(item=item).count() == 2
    assert worker._claim("w/0", "default", str(rows[0].pk)) is None
