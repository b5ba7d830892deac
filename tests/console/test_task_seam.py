"""The django-tasks-db internals ``console/worker.py`` and ``console/task_recovery.py`` rely on,
pinned in the installed version: an upgrade that renames or reshapes them fails here, loudly,
instead of leaving tasks unclaimed or stuck ``RUNNING``."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult, DBTaskResultQuerySet
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from reviewconsole.console import task_recovery


def _params(func):
    return list(inspect.signature(func).parameters)


def test_the_installed_version_is_one_this_seam_was_checked_against():
    major, minor, *_ = (int(p) for p in version("django-tasks-db").split(".")[:2])
    assert (major, minor) == (0, 13), "django-tasks-db changed: check the seam below, then this pin"


def test_claiming_uses_ready_get_locked_and_claim():
    assert _params(DBTaskResultQuerySet.ready) == ["self"]
    assert _params(DBTaskResultQuerySet.get_locked) == ["self"]
    assert _params(DBTaskResult.claim) == ["self", "worker_id"]
    assert inspect.getsource(DBTaskResult.claim).count("RUNNING") == 1  # claim marks it RUNNING
    assert _params(exclusive_transaction) == ["using"]
    assert _params(is_locked_database_exception) == ["e"]


def test_running_uses_the_worker_class():
    assert _params(Worker.__init__) == [
        "self",
        "queue_names",
        "interval",
        "batch",
        "backend_name",
        "startup_delay",
        "max_tasks",
        "worker_id",
        "excluded_queue_names",
    ]
    assert _params(Worker.run_task) == ["self", "db_task_result"]


def test_the_recovery_sweep_reads_and_writes_these_columns_and_statuses():
    fields = {f.name for f in DBTaskResult._meta.get_fields()}
    assert {"status", "started_at", "finished_at", "worker_ids", "task_path", "run_after"} <= fields
    assert {"return_value", "exception_class_path", "traceback"} <= fields
    assert (task_recovery.RUNNING, task_recovery.READY, task_recovery.FAILED) == (
        TaskResultStatus.RUNNING,
        TaskResultStatus.READY,
        TaskResultStatus.FAILED,
    )
    assert DBTaskResult._meta.get_field("worker_ids").get_default() == []
