"""What the worker does with task notifications (``console/task_notify.py``), on any database;
the notifications themselves, on PostgreSQL, are tested in ``tests/scaleout/test_task_listener.py``
and ``tests/scaleout/test_task_notify.py``."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_tasks_db.backend import DatabaseBackend

from reviewconsole.console import task_notify
from reviewconsole.console.worker import ThreadWorker
from reviewconsole.outbound.tasks import QUEUE as OUTBOUND_QUEUE
from tests.console.test_worker_wakeups import RUN_SESSION, _task

pytestmark = pytest.mark.django_db


def test_without_postgresql_nothing_is_announced_and_the_threads_poll_at_their_interval():
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the worker listens (tests/scaleout/test_task_listener.py)")
    worker = ThreadWorker(count=1)
    assert (worker.listening, worker.interval, worker._listener) == (False, 0.5, None)
    assert ThreadWorker(interval=0.05).interval == 0.05
    task_result = _task(RUN_SESSION, save=True).task_result
    with CaptureQueriesContext(connection) as queries:
        task_notify.announce_enqueued(DatabaseBackend, task_result=task_result)
    assert queries.captured_queries == []


def test_without_a_channel_the_worker_does_not_listen(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "TASK_NOTIFY_CHANNEL": ""}
    worker = ThreadWorker(count=1)
    assert (worker.listening, worker.interval, worker._listener) == (False, 0.5, None)


def test_a_notification_wakes_one_thread_of_its_queue_with_the_task_id():
    worker = ThreadWorker(count=2, outbound=1)
    worker._on_notification("task-1", OUTBOUND_QUEUE)
    assert worker._wakes["default"].wait(0) is False
    assert worker._wakes[OUTBOUND_QUEUE].hint() == "task-1"
    assert worker._wakes[OUTBOUND_QUEUE].wait(0) is True
    worker._on_notification("task-2", "a queue this worker does not run")
    assert [wake.wait(0) for wake in worker._wakes.values()] == [False, False]


def test_a_reconnected_listener_has_one_thread_of_each_queue_claim_once():
    worker = ThreadWorker(count=2, outbound=1)
    worker._on_listen()
    for wake in worker._wakes.values():
        assert wake.hint() is None  # any ready task: the queue's claim
        assert (wake.wait(0), wake.wait(0)) == (True, False)


def test_a_worker_announces_its_own_queues_while_it_runs():
    worker = ThreadWorker(count=1, outbound=1)
    task_notify.serve(worker._wakes)
    try:
        assert task_notify._served == {"default": 1, OUTBOUND_QUEUE: 1}
    finally:
        task_notify.serve(worker._wakes, serving=False)
    assert task_notify._served == {}
