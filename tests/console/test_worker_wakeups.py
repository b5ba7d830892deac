"""The task worker wakes only what an enqueue needs, and an idle thread takes no write lock
(``console/worker.py``): on SQLite the claim's write transaction locks the whole database, so a
thread that claims nothing must not hold up a run's commit or a reviewer's decision."""

from __future__ import annotations

import datetime as dt
import sys
import threading
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from reviewconsole.console.worker import SWITCH_INTERVAL, ThreadWorker, _Wake
from reviewconsole.outbound.tasks import QUEUE as OUTBOUND_QUEUE
from tests.outbound.test_retries import DB_TASKS, _reset_task_backends

pytestmark = pytest.mark.django_db

RUN_SESSION = "reviewconsole.workflow_sessions.tasks.run_session"
DELIVER = "reviewconsole.outbound.tasks.deliver_message"
WAIT = 10.0
"""Seconds after which a wait gives up (a guard: the waits below end on the event)."""


def _task(path: str, queue: str = "default", run_after: dt.datetime | None = None, save: bool = False) -> DBTaskResult:
    row = DBTaskResult(
        status="READY",
        args_kwargs={"args": ["x"], "kwargs": {}},
        task_path=path,
        backend_name="default",
        queue_name=queue,
        run_after=run_after or get_date_max(),
    )
    if save:
        row.save()
    return row


def test_a_claim_with_nothing_ready_is_one_read_and_no_transaction():
    with CaptureQueriesContext(connection) as queries:
        assert ThreadWorker()._claim("console-test/0", "default") is None
    assert len(queries) == 1, [q["sql"] for q in queries]
    assert queries[0]["sql"].startswith("SELECT")


def test_a_ready_task_is_claimed():
    row = _task(RUN_SESSION, save=True)
    claimed = ThreadWorker()._claim("console-test/0", "default")
    assert claimed is not None and claimed.pk == row.pk
    row.refresh_from_db()
    assert (row.status, row.worker_ids) == ("RUNNING", ["console-test/0"])


def test_a_thread_woken_by_an_enqueue_claims_that_task_by_its_id_in_two_statements():
    other = _task(RUN_SESSION, save=True)  # ready too, but not the one whose enqueue woke the thread
    row = _task(RUN_SESSION, save=True)
    with CaptureQueriesContext(connection) as queries:
        claimed = ThreadWorker()._claim("console-test/0", "default", hint=str(row.pk))
    assert claimed is not None and claimed.pk == row.pk
    assert (claimed.status, claimed.worker_ids) == ("RUNNING", ["console-test/0"])
    sql = [q["sql"].split()[0] for q in queries]
    assert sql == ["SELECT", "UPDATE"], [q["sql"] for q in queries]  # no BEGIN EXCLUSIVE, no scan of the queue
    row.refresh_from_db()
    other.refresh_from_db()
    assert (row.status, row.worker_ids, row.started_at) == ("RUNNING", ["console-test/0"], claimed.started_at)
    assert other.status == "READY"


def test_of_two_threads_woken_for_one_task_only_one_claims_it():
    row = _task(RUN_SESSION, save=True)
    worker = ThreadWorker(count=2)
    first = worker._claim_enqueued("console-test/0", "default", str(row.pk))
    second = worker._claim_enqueued("console-test/1", "default", str(row.pk))
    assert first is not None and second is None
    row.refresh_from_db()
    assert row.worker_ids == ["console-test/0"]


def test_a_hint_for_a_task_taken_meanwhile_falls_back_to_any_ready_task():
    taken = _task(RUN_SESSION, save=True)
    DBTaskResult.objects.filter(pk=taken.pk).update(status="RUNNING", worker_ids=["elsewhere/0"])
    ready = _task(RUN_SESSION, save=True)
    claimed = ThreadWorker()._claim("console-test/0", "default", hint=str(taken.pk))
    assert claimed is not None and claimed.pk == ready.pk
    taken.refresh_from_db()
    assert taken.worker_ids == ["elsewhere/0"]  # left to whoever took it


def test_a_hint_for_another_queue_is_not_claimed_by_this_one():
    row = _task(DELIVER, queue=OUTBOUND_QUEUE, save=True)
    assert ThreadWorker()._claim_enqueued("console-test/0", "default", str(row.pk)) is None
    row.refresh_from_db()
    assert row.status == "READY"


@pytest.mark.django_db(transaction=True)  # an enqueue outside a transaction wakes at once
def test_an_enqueue_hands_its_task_id_to_the_thread_it_wakes():
    worker = ThreadWorker(count=1)
    first, second = _task(RUN_SESSION), _task(RUN_SESSION)
    worker._on_enqueue(task_result=first.task_result)
    assert worker._wakes["default"].hint() == str(first.pk)
    assert worker._wakes["default"].hint() is None
    worker._on_enqueue(task_result=first.task_result)
    worker._on_enqueue(task_result=second.task_result)  # one thread: only the oldest id is kept
    assert worker._wakes["default"].hint() == str(first.pk)
    assert worker._wakes["default"].hint() is None


@pytest.mark.django_db(transaction=True)  # an enqueue outside a transaction wakes at once
def test_an_enqueue_wakes_its_own_queue_only():
    worker = ThreadWorker(count=2, outbound=1)
    worker._on_enqueue(task_result=_task(DELIVER, queue=OUTBOUND_QUEUE).task_result)
    assert worker._wakes["default"].wait(0) is False
    assert worker._wakes[OUTBOUND_QUEUE].wait(0) is True
    worker._on_enqueue(task_result=_task(RUN_SESSION).task_result)
    assert worker._wakes[OUTBOUND_QUEUE].wait(0) is False
    assert worker._wakes["default"].wait(0) is True


@pytest.fixture
def db_tasks(settings):
    settings.TASKS = DB_TASKS  # the database backend, which defers tasks (the test default runs them at once)
    _reset_task_backends()
    yield
    _reset_task_backends()


@pytest.mark.django_db(transaction=True)  # an enqueue outside a transaction wakes at once
def test_a_deferred_task_wakes_nobody(db_tasks):
    worker = ThreadWorker(count=2)
    later = timezone.now() + dt.timedelta(hours=1)
    worker._on_enqueue(task_result=_task(RUN_SESSION, run_after=later).task_result)
    assert worker._wakes["default"].wait(0) is False


def test_one_notify_wakes_one_waiting_thread():
    wake = _Wake(threads=2)
    woken: list[int] = []
    changed = threading.Condition()

    def waiter(n: int) -> None:
        if wake.wait(WAIT):
            with changed:
                woken.append(n)
                changed.notify_all()

    threads = [threading.Thread(target=waiter, args=(n,), daemon=True) for n in range(2)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + WAIT
    while len(wake._condition._waiters) < 2 and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.001)  # both are waiting (a guard with a deadline, not a timed wait)
    wake.notify()
    with changed:
        assert changed.wait_for(lambda: len(woken) == 1, WAIT)
    assert len(wake._condition._waiters) == 1  # type: ignore[attr-defined]  # the other still waits
    wake.notify()
    with changed:
        assert changed.wait_for(lambda: len(woken) == 2, WAIT)
    assert sorted(woken) == [0, 1]
    for thread in threads:
        thread.join(WAIT)


@pytest.mark.django_db(transaction=True)  # else its heartbeat waits for the test's transaction
def test_the_gil_is_handed_over_sooner_while_the_worker_runs(db_tasks):
    before = sys.getswitchinterval()
    worker = ThreadWorker(count=1, outbound=0, interval=0.05)
    worker.start()
    try:
        assert sys.getswitchinterval() == min(SWITCH_INTERVAL, before) < 0.005
    finally:
        worker.stop()
    assert sys.getswitchinterval() == before


# -- an enqueue inside a transaction ------------------------------------------------------------


def _enqueue_in_transaction(worker: ThreadWorker, *, rollback: bool = False) -> str:
    """Enqueue ``expire_interrupt(0)`` inside a transaction with ``worker`` listening; its id."""
    from django.db import transaction
    from django.tasks.signals import task_enqueued

    from reviewconsole.inbox.tasks import expire_interrupt

    task_enqueued.connect(worker._on_enqueue, weak=False)
    try:
        with transaction.atomic():
            task_id = expire_interrupt.enqueue(0).id
            assert worker._wakes["default"].wait(0) is False  # nobody is woken before the commit
            assert worker._wakes["default"].handed() is None
            if rollback:
                transaction.set_rollback(True)
    finally:
        task_enqueued.disconnect(worker._on_enqueue)
    return task_id


def test_a_task_enqueued_in_a_transaction_with_an_idle_thread_is_claimed_in_it_and_handed_over_on_commit(
    db_tasks, django_capture_on_commit_callbacks
):
    worker = ThreadWorker(count=1)
    worker._wakes["default"].idle = 1  # a thread waits
    with django_capture_on_commit_callbacks(execute=True):
        task_id = _enqueue_in_transaction(worker)
    row = DBTaskResult.objects.get(pk=task_id)
    assert (row.status, row.worker_ids) == ("RUNNING", [f"{worker.worker_id}/handover"])
    handed = worker._wakes["default"].handed()  # the claimed row itself: its thread runs it without a query
    assert handed is not None and str(handed.pk) == task_id
    assert (handed.status, handed.worker_ids, handed.started_at) == (row.status, row.worker_ids, row.started_at)
    assert worker._wakes["default"].wait(0) is True


def test_a_task_enqueued_in_a_transaction_with_no_idle_thread_stays_ready_and_wakes_a_thread_on_commit(
    db_tasks, django_capture_on_commit_callbacks
):
    worker = ThreadWorker(count=1)
    with django_capture_on_commit_callbacks(execute=True):
        task_id = _enqueue_in_transaction(worker)
    assert DBTaskResult.objects.get(pk=task_id).status == "READY"
    assert worker._wakes["default"].handed() is None
    assert worker._wakes["default"].hint() == task_id


def test_a_rolled_back_enqueue_leaves_no_task_and_wakes_nobody(db_tasks, django_capture_on_commit_callbacks):
    worker = ThreadWorker(count=1)
    worker._wakes["default"].idle = 1
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        task_id = _enqueue_in_transaction(worker, rollback=True)
    assert callbacks == []
    assert not DBTaskResult.objects.filter(pk=task_id).exists()
    assert worker._wakes["default"].wait(0) is False
    assert worker._wakes["default"].handed() is None


def test_tasks_handed_over_but_not_run_go_back_to_the_queue_when_the_worker_stops(
    db_tasks, django_capture_on_commit_callbacks
):
    worker = ThreadWorker(count=1, outbound=0)
    worker._wakes["default"].idle = 1
    with django_capture_on_commit_callbacks(execute=True):
        task_id = _enqueue_in_transaction(worker)
    worker.stop()  # never started: nothing took the task handed over
    row = DBTaskResult.objects.get(pk=task_id)
    assert (row.status, row.worker_ids, row.started_at) == ("READY", [], None)


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_a_task_handed_over_by_a_committed_transaction(db_tasks):
    from django.tasks.signals import task_finished

    finished: list[str] = []
    done = threading.Condition()

    def record(task_result=None, **kwargs):
        with done:
            finished.append(task_result.id)
            done.notify_all()

    task_finished.connect(record, weak=False)
    worker = ThreadWorker(count=1, outbound=0, interval=WAIT)  # no poll within the wait: only a wake-up runs it
    worker.start()
    try:
        wake = worker._wakes["default"]
        deadline = time.monotonic() + WAIT
        while wake.idle < 1 and time.monotonic() < deadline:
            time.sleep(0.001)  # the thread waits for work (a guard with a deadline, not a timed wait)
        assert wake.idle == 1
        from django.db import transaction

        from reviewconsole.inbox.tasks import expire_interrupt

        with transaction.atomic():
            task_id = expire_interrupt.enqueue(0).id
        with done:
            assert done.wait_for(lambda: task_id in finished, WAIT)
    finally:
        worker.stop()
        task_finished.disconnect(record)
    row = DBTaskResult.objects.get(pk=task_id)
    assert (row.status, row.worker_ids) == ("SUCCESSFUL", [f"{worker.worker_id}/handover"])
