"""Tasks left ``RUNNING`` by a dead worker run again; old finished ones go (``console/task_recovery.py``)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from reviewconsole.console import task_recovery
from reviewconsole.console.models import WorkerHeartbeat
from reviewconsole.console.task_recovery import (
    HEARTBEAT_KEEP,
    TASK_KEEP,
    TaskKeeper,
    heartbeat,
    prune_finished_tasks,
    prune_heartbeats,
    requeue_stale_tasks,
)

pytestmark = pytest.mark.django_db

LEASE = 10.0


def _running(worker_ids, started_ago: float) -> DBTaskResult:
    return DBTaskResult.objects.create(
        status="RUNNING",
        args_kwargs={"args": ["msg_1"], "kwargs": {}},
        task_path="reviewconsole.outbound.tasks.deliver_message",
        backend_name="default",
        run_after=get_date_max(),
        started_at=timezone.now() - dt.timedelta(seconds=started_ago),
        worker_ids=worker_ids,
    )


def _beat(worker_id: str, ago: float) -> None:
    at = timezone.now() - dt.timedelta(seconds=ago)
    heartbeat(worker_id, started_at=at, now=at)


def test_a_task_of_a_dead_worker_is_queued_again():
    _beat("console-dead", ago=LEASE + 5)
    task = _running(["console-dead/0"], started_ago=LEASE + 5)
    assert requeue_stale_tasks(lease=LEASE) == [str(task.pk)]
    task.refresh_from_db()
    assert (task.status, task.started_at) == ("READY", None)
    assert DBTaskResult.objects.ready().filter(pk=task.pk).exists()  # a worker may claim it now


def test_a_task_of_a_live_worker_is_left_running_however_long_it_takes():
    _beat("console-alive", ago=1)
    task = _running(["console-alive/1"], started_ago=LEASE * 10)
    assert requeue_stale_tasks(lease=LEASE) == []
    task.refresh_from_db()
    assert task.status == "RUNNING"


def test_a_task_started_within_the_lease_is_left_alone_even_without_a_heartbeat():
    task = _running(["db-worker-xyz"], started_ago=1)  # e.g. claimed by django-tasks-db's db_worker
    assert requeue_stale_tasks(lease=LEASE) == []
    task.refresh_from_db()
    assert task.status == "RUNNING"


def test_a_task_of_a_worker_without_a_heartbeat_counts_as_dead_after_the_lease():
    task = _running(["db-worker-xyz"], started_ago=LEASE + 1)
    assert requeue_stale_tasks(lease=LEASE) == [str(task.pk)]


def test_a_task_that_killed_its_worker_too_often_is_failed_not_queued_again(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "TASK_MAX_CLAIMS": 3}
    task = _running(["a/0", "b/0", "c/0"], started_ago=LEASE + 1)
    assert requeue_stale_tasks(lease=LEASE) == [str(task.pk)]
    task.refresh_from_db()
    assert task.status == "FAILED"
    assert task.exception_class_path == "reviewconsole.console.task_recovery.WorkerLost"
    assert "3 times" in task.traceback


def test_a_dead_run_session_task_is_closed_its_session_has_a_recovery_of_its_own():
    from reviewconsole.console.task_recovery import RUN_AGAIN_ELSEWHERE
    from reviewconsole.workflow_sessions.tasks import run_session

    assert set(RUN_AGAIN_ELSEWHERE) == {run_session.module_path}
    task = _running(["console-dead/0"], started_ago=LEASE + 1)
    DBTaskResult.objects.filter(pk=task.pk).update(task_path=run_session.module_path)
    assert requeue_stale_tasks(lease=LEASE) == [str(task.pk)]
    task.refresh_from_db()
    assert task.status == "FAILED"
    assert "run again by its lease's recovery" in task.traceback
    assert not DBTaskResult.objects.ready().exists()


def test_a_task_finished_meanwhile_is_not_touched():
    task = _running(["console-dead/0"], started_ago=LEASE + 1)
    DBTaskResult.objects.filter(pk=task.pk).update(status="SUCCESSFUL")
    assert requeue_stale_tasks(lease=LEASE) == []
    task.refresh_from_db()
    assert task.status == "SUCCESSFUL"


def test_old_heartbeats_are_pruned_and_their_tasks_still_count_as_dead():
    _beat("console-long-gone", ago=HEARTBEAT_KEEP.total_seconds() + 60)
    _beat("console-alive", ago=1)
    task = _running(["console-long-gone/0"], started_ago=HEARTBEAT_KEEP.total_seconds() + 60)
    assert prune_heartbeats() == 1
    assert list(WorkerHeartbeat.objects.values_list("worker_id", flat=True)) == ["console-alive"]
    assert requeue_stale_tasks(lease=LEASE) == [str(task.pk)]


@pytest.mark.django_db(transaction=True)  # the keeper's thread sees committed rows
def test_the_keeper_beats_and_removes_its_heartbeat_when_stopped():
    keeper = TaskKeeper("console-keeper")
    keeper.beat()
    row = WorkerHeartbeat.objects.get(worker_id="console-keeper")
    assert timezone.now() - row.beat_at < dt.timedelta(seconds=5)
    keeper.start()
    keeper.stop()
    assert not WorkerHeartbeat.objects.filter(worker_id="console-keeper").exists()


def _finished(status: str, finished_ago: dt.timedelta | None) -> DBTaskResult:
    task = _running(["console-done/0"], started_ago=60)
    finished_at = None if finished_ago is None else timezone.now() - finished_ago
    DBTaskResult.objects.filter(pk=task.pk).update(status=status, finished_at=finished_at)
    return task


def test_tasks_that_succeeded_a_week_ago_are_pruned_and_every_other_task_kept():
    old = TASK_KEEP + dt.timedelta(minutes=1)
    gone = _finished("SUCCESSFUL", old)
    kept = [
        _finished("SUCCESSFUL", TASK_KEEP - dt.timedelta(minutes=1)),
        _finished("FAILED", old),  # its traceback is for someone to read
        _finished("READY", None),
        _running(["console-alive/0"], started_ago=old.total_seconds()),
    ]
    assert prune_finished_tasks() == 1
    assert not DBTaskResult.objects.filter(pk=gone.pk).exists()
    assert set(DBTaskResult.objects.values_list("pk", flat=True)) == {task.pk for task in kept}


def test_a_prune_deletes_at_most_its_batches_and_the_next_one_goes_on(monkeypatch):
    monkeypatch.setattr(task_recovery, "PRUNE_BATCH", 2)
    for _ in range(5):
        _finished("SUCCESSFUL", TASK_KEEP + dt.timedelta(hours=1))
    assert prune_finished_tasks(batches=2) == 4
    assert DBTaskResult.objects.count() == 1
    assert prune_finished_tasks(batches=2) == 1
    assert not DBTaskResult.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_keeper_prunes_finished_tasks_at_its_first_turn_then_once_every_prune_interval(monkeypatch):
    first = _finished("SUCCESSFUL", TASK_KEEP + dt.timedelta(hours=1))
    keeper = TaskKeeper("console-keeper")
    keeper.beat()
    assert not DBTaskResult.objects.filter(pk=first.pk).exists()
    second = _finished("SUCCESSFUL", TASK_KEEP + dt.timedelta(hours=1))
    keeper.beat()  # within PRUNE_EVERY of the last prune
    assert DBTaskResult.objects.filter(pk=second.pk).exists()
    monkeypatch.setattr(task_recovery, "PRUNE_EVERY", 0.0)
    keeper.beat()
    assert not DBTaskResult.objects.filter(pk=second.pk).exists()
