"""The task worker that runs inside the console process (the embedded default) and in ``manage.py worker``.

Each thread claims tasks the way django-tasks-db's ``db_worker`` does (a locked select, then a
claim) and runs them with its ``Worker.run_task``. django-tasks-db 0.13 has no public API for
"claim one task" or "run this task" outside its ``db_worker`` loop (which sleeps a fixed interval
and runs one task at a time), so this module uses the pieces that loop is made of:
``DBTaskResult.objects.ready()``, ``DBTaskResultQuerySet.get_locked()``, ``DBTaskResult.claim()``,
``utils.exclusive_transaction``, ``utils.is_locked_database_exception`` and ``Worker.run_task``.
``tests/console/test_task_seam.py`` pins their names and signatures in the installed version,
so an upgrade that changes them fails loudly.

Instead of sleeping a fixed interval a thread waits to be woken by ``task_enqueued``, so a task
enqueued in this process starts at once. On PostgreSQL the enqueues of other processes wake it
too: they are announced with ``NOTIFY`` and the process's listener thread hands each to the
worker (``task_notify.py``), so the threads poll only every ``TASK_POLL_SECONDS`` (default 2), for
deferred tasks that came due and anything a lost notification left; elsewhere (SQLite) they
poll every ``interval`` seconds (0.5 by default) for the tasks of other processes. One enqueue
wakes one thread of the task's queue, not every thread, and hands it the task's id: the thread
claims that task with a read by primary key and one conditional ``UPDATE``
(:meth:`ThreadWorker._claim_enqueued`), 0.7–0.9 ms sooner than the queue's claim below
(``bench/README.md``). A task enqueued inside a
transaction (a session's run, with what it is for: ``enqueue_run``) wakes a thread when that
commits; if a thread of its queue is idle, the task is claimed for this process in that same
transaction and handed over as it commits, so the thread starts it without a query
(:meth:`ThreadWorker._claim_for_handover`). Otherwise a thread looks for
a ready task with a plain read before it takes the claim's write transaction: on SQLite that
write lock is the whole database's, and an idle thread taking it for nothing makes a run's commit
or a reviewer's decision wait. Outbound
deliveries (``outbound.tasks.QUEUE``) are claimed by threads of their own (``outbound``), so a
receiver that never answers holds one of those, never a thread a session's run waits for. The
process keeps a heartbeat and sweeps for tasks left ``RUNNING`` by dead workers
(:class:`~reviewconsole.console.task_recovery.TaskKeeper`); its threads claim as
``<process id>/<n>``.

While the threads run, the process hands the GIL over every :data:`SWITCH_INTERVAL` seconds
instead of CPython's 5 ms (``sys.setswitchinterval``; the previous value is restored by
:meth:`ThreadWorker.stop`). A run queued by a door passes from thread to thread many times
before its first event reaches a client (the enqueue on a pool thread, the claim on a worker
thread, every ORM call of the run between the run's event loop and its thread, the progress
message to Daphne's loop): each time, a thread woken by a database reply or a wake-up waits for
whichever thread holds the GIL to be asked to let go, up to the interval. With 5 ms an AG-UI
run's first text delta came a quarter to a third later than with 0.5 ms (``bench/bench_agui.py``,
``bench/README.md``).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque

from asgiref.sync import AsyncSingleThreadContext
from django.db import router, transaction
from django.db.models import QuerySet
from django.db.utils import OperationalError
from django.tasks import TaskResult
from django.tasks.signals import task_enqueued
from django.utils import timezone
from django.utils.crypto import get_random_string
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from ..outbound.tasks import QUEUE as OUTBOUND_QUEUE
from ..thread_connections import close_thread_connections, recycle_connections
from . import task_notify
from .task_recovery import TaskKeeper

logger = logging.getLogger("reviewconsole.worker")

__all__ = ["SWITCH_INTERVAL", "ThreadWorker", "task_runner"]

READY, RUNNING = TaskResultStatus.READY, TaskResultStatus.RUNNING

SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits for it, while the worker runs (see the
module docstring); CPython's default is 0.005."""


def task_runner(worker_id: str, queue: str = "default", interval: float = 0.1) -> Worker:
    """``django_tasks_db``'s worker for ``queue`` on the ``default`` backend, run task by task
    (``run_task``) by a claim thread; its claims name ``worker_id``; ``interval``: seconds."""
    return Worker(
        queue_names=[queue],
        interval=interval,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=[],
    )


class ThreadWorker:
    """``count`` worker threads on ``queue`` and ``outbound`` threads on the outbound deliveries'
    queue, until :meth:`stop`. ``interval``: seconds between a thread's polls; None gives
    ``TASK_POLL_SECONDS`` when notifications wake the threads (:attr:`listening`), else 0.5."""

    def __init__(
        self, *, count: int = 1, interval: float | None = None, queue: str = "default", outbound: int = 1
    ) -> None:
        self.listening = task_notify.enabled()
        """True on PostgreSQL with a notification channel: a listener thread wakes the threads."""
        if interval is None:
            interval = task_notify.poll_seconds() if self.listening else 0.5
        self.interval = interval
        self.queue = queue
        self.running = False
        self.worker_id = f"console-{get_random_string(12)}"
        self._handover_id = f"{self.worker_id}/handover"
        self._wakes: dict[str, _Wake] = {}
        self._threads: list[threading.Thread] = []
        # (queue, worker id suffix, thread name) per thread; the suffix keeps "<process id>/<n>".
        self._plan = [(queue, str(n), f"task-worker-{n}") for n in range(count)] + [
            (OUTBOUND_QUEUE, f"outbound-{n}", f"outbound-worker-{n}") for n in range(outbound)
        ]
        for name in {name for name, _, _ in self._plan}:
            self._wakes[name] = _Wake(threads=sum(1 for plan in self._plan if plan[0] == name))
        self._keeper = TaskKeeper(self.worker_id)
        self._listener = (
            task_notify.TaskListener(on_notify=self._on_notification, on_connect=self._on_listen)
            if self.listening
            else None
        )
        self._switch_interval: float | None = None  # the process's own, while ours is set

    def _on_enqueue(self, task_result: TaskResult | None = None, **kwargs: object) -> None:
        """``task_enqueued``: wake one thread of the task's queue, unless it is deferred (the
        poll takes it when due) or for a queue this worker does not run.

        A task enqueued inside a transaction (its row is written with what it is for:
        ``enqueue_run``) wakes a thread once that commits (``on_commit``, in the order the
        transaction asked for things); a rolled-back one wakes nobody. When a thread of the
        queue is idle, the task is claimed in that same transaction (:meth:`_claim_for_handover`)
        and handed to a thread of this process as it commits: the thread runs it without a claim
        of its own (the claim's write would wait for whatever commits next, e.g. the outbox
        relay of the same commit). Unless it was claimed so, the task is announced to the other
        processes when notifications are on (``task_notify.notify``, in the same transaction): an
        idle thread elsewhere may start it before one of ours is free."""
        if task_result is None:
            return
        run_after = task_result.task.run_after
        if run_after is not None and run_after > timezone.now():
            return
        wake = self._wakes.get(task_result.task.queue_name)
        if wake is None:
            return
        hint = task_result.id if task_result.backend == "default" else None
        using = router.db_for_write(DBTaskResult)
        if not transaction.get_connection(using).in_atomic_block:
            wake.notify(hint)
        elif hint is not None and wake.idle and (claimed := self._claim_for_handover(hint)) is not None:
            transaction.on_commit(lambda: wake.hand_over(claimed), using=using, robust=True)
            return  # claimed for this process: nothing for the others
        else:
            transaction.on_commit(lambda: wake.notify(hint), using=using, robust=True)
        if self.listening and hint is not None:
            task_notify.notify(hint, task_result.task.queue_name)

    def _on_notification(self, task_id: str, queue: str) -> None:
        """The listener's: another process announced the ready task ``task_id`` of ``queue``;
        wake a thread of that queue with it, as :meth:`_on_enqueue` does (none for another queue)."""
        wake = self._wakes.get(queue)
        if wake is not None:
            wake.notify(task_id)

    def _on_listen(self) -> None:
        """The listener's, on each (re)connect: what was announced while it had no connection is
        lost, so one thread of each queue claims once."""
        for wake in self._wakes.values():
            wake.notify()

    def _claim_for_handover(self, task_id: str) -> DBTaskResult | None:
        """The ready task ``task_id``, claimed for this process (``RUNNING`` under ``<process
        id>/handover``) in the current transaction; None when it is not ready. The row is read
        here, before the commit, so the thread it is handed to runs it without a query.

        Nothing is lost when nothing runs it: a rollback takes the claim back with the task, and
        a process that dies first leaves it ``RUNNING`` under its own id, which the sweep of
        stale tasks (``task_recovery``) handles like any other; :meth:`stop` puts back to
        ``READY`` the tasks handed over but not run. A database error fails the transaction (it
        is not swallowed, as :meth:`_claim_enqueued` does outside one)."""
        return _claim_ready(DBTaskResult.objects.filter(pk=task_id, backend_name="default"), self._handover_id)

    def _claim(self, worker_id: str, queue: str, hint: str | None = None) -> DBTaskResult | None:
        """The task this thread is to run now, claimed (``RUNNING``, ``worker_id`` appended to its
        ``worker_ids``), or None when none is ready. ``hint``: the id of the task whose enqueue
        woke the thread, tried first (:meth:`_claim_enqueued`), then any ready one."""
        if hint is not None and (task_result := self._claim_enqueued(worker_id, queue, hint)) is not None:
            return task_result
        tasks = DBTaskResult.objects.ready().filter(backend_name="default", queue_name=queue)
        if not tasks.exists():  # a plain read: no write lock taken when there is nothing to claim
            return None
        with exclusive_transaction(tasks.db):
            try:
                task_result = tasks.get_locked()
                if task_result is not None:
                    # Claim it so that no other worker (thread or process) runs it too.
                    task_result.claim(worker_id)
                return task_result
            except OperationalError as exc:
                if is_locked_database_exception(exc):
                    return None
                raise

    def _claim_enqueued(self, worker_id: str, queue: str, task_id: str) -> DBTaskResult | None:
        """Claim the task ``task_id`` if it is still ready: a read by primary key, then one
        ``UPDATE … WHERE id = … AND status = 'READY'`` (its own transaction; no ``BEGIN
        EXCLUSIVE``, no scan of the queue). The update's condition decides between racing
        claimers, threads or processes: the one whose update changed the row runs it. None when
        it is gone, taken, not committed yet or the database is locked (the caller then looks
        for any ready task)."""
        task = DBTaskResult.objects.filter(pk=task_id, backend_name="default", queue_name=queue)
        try:
            return _claim_ready(task, worker_id)
        except OperationalError as exc:
            if is_locked_database_exception(exc):
                return None
            raise

    def _loop(self, worker_id: str, queue: str) -> None:
        runner = task_runner(worker_id, queue, self.interval)
        with AsyncSingleThreadContext():  # every run's event loop on one thread kept for it, not a new one each
            self._turns(runner, worker_id, queue)
        close_thread_connections()

    def _turns(self, runner: Worker, worker_id: str, queue: str) -> None:
        """Claim (or take what is handed over) and run tasks until :meth:`stop`."""
        while self.running:
            recycle_connections()  # a healthy SQLite connection is kept across tasks (thread_connections.py)
            wake = self._wakes[queue]
            task_result = wake.handed()  # claimed for us in its enqueue's transaction; else claim one
            if task_result is None:
                try:
                    task_result = self._claim(worker_id, queue, wake.hint())
                except Exception:  # keep the worker alive through a broken connection; the next turn reconnects
                    logger.exception("Could not claim a task")
                    task_result = None
            if task_result is not None:
                try:
                    runner.run_task(task_result)
                except Exception:
                    # Recording the outcome failed (the database went away). Keep the thread: the
                    # task stays RUNNING under this live worker; a session left half-run is picked
                    # up by recovery once its lease expires.
                    logger.exception("Task %s: could not record its outcome", task_result.id)
                continue
            wake.wait(self.interval)

    def start(self) -> None:
        self.running = True
        if self._switch_interval is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL, self._switch_interval))
        self._keeper.start()
        task_enqueued.connect(self._on_enqueue, weak=False)
        task_notify.serve(self._wakes)
        if self._listener is not None:
            self._listener.start()
        for queue, suffix, name in self._plan:
            thread = threading.Thread(
                target=self._loop, args=(f"{self.worker_id}/{suffix}", queue), name=name, daemon=True
            )
            thread.start()
            self._threads.append(thread)
        logger.info("Started %d task worker thread(s) as %s", len(self._threads), self.worker_id)

    def stop(self, timeout: float = 10.0) -> None:
        self.running = False
        for wake in self._wakes.values():
            wake.notify_all()
        for thread in self._threads:
            thread.join(timeout)
        task_enqueued.disconnect(self._on_enqueue)
        task_notify.serve(self._wakes, serving=False)
        if self._listener is not None:
            self._listener.stop(timeout)
        unrun = [task for wake in self._wakes.values() for task in wake.take_handed()]
        if unrun:  # handed over but never run: back to the queue for whoever runs next
            DBTaskResult.objects.filter(pk__in=[task.pk for task in unrun], status=RUNNING).update(
                status=READY, started_at=None, worker_ids=[]
            )
            if self.listening:
                for task in unrun:
                    task_notify.notify(str(task.pk), task.queue_name)
        self._keeper.stop()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None


def _claim_ready(task: QuerySet[DBTaskResult], worker_id: str) -> DBTaskResult | None:
    """The one task ``task`` selects, claimed for ``worker_id`` if it is still ready (``RUNNING``,
    ``worker_id`` appended to its ``worker_ids``): a read, then one ``UPDATE … WHERE … AND status =
    'READY'``, whose condition decides between racing claimers; None when it is not ready."""
    ready = task.filter(status=READY)
    task_result = ready.first()
    if task_result is None:
        return None
    started_at, worker_ids = timezone.now(), [*task_result.worker_ids, worker_id]
    if not ready.update(status=RUNNING, started_at=started_at, worker_ids=worker_ids):
        return None
    task_result.status, task_result.started_at, task_result.worker_ids = RUNNING, started_at, worker_ids
    return task_result


class _Wake:
    """Wake-ups for the ``threads`` threads of one queue: :meth:`notify` wakes one waiting thread,
    or, when none waits, lets the next :meth:`wait` return at once (at most ``threads`` such
    tokens: a busy thread looks for the next task when its own is done anyway). A wake-up may
    carry the enqueued task's id, which the thread tries first (:meth:`hint`); at most
    ``threads`` ids are kept and later ones dropped: those are found by the queue's read, which
    takes the oldest ready task first, so a burst of enqueues (a backlog) starts in the order it
    came, not its newest tasks first."""

    def __init__(self, *, threads: int) -> None:
        self._condition = threading.Condition()
        self._tokens = 0
        self._limit = max(1, threads)
        self._hints: deque[str] = deque()
        self._handed: deque[DBTaskResult] = deque()  # claimed for this process: every one is run, none dropped
        self.idle = 0
        """Threads waiting in :meth:`wait` right now (read without the lock: a hint, not a promise)."""

    def notify(self, hint: str | None = None) -> None:
        with self._condition:
            self._tokens = min(self._tokens + 1, self._limit)
            if hint is not None and len(self._hints) < self._limit:
                self._hints.append(hint)
            self._condition.notify()

    def hand_over(self, task_result: DBTaskResult) -> None:
        """Wake a thread to run ``task_result``, already claimed for this process (kept until run)."""
        with self._condition:
            self._handed.append(task_result)
            self._tokens = min(self._tokens + 1, self._limit)
            self._condition.notify()

    def handed(self) -> DBTaskResult | None:
        """The oldest task handed over and not taken by a thread yet, or None."""
        with self._condition:
            return self._handed.popleft() if self._handed else None

    def take_handed(self) -> list[DBTaskResult]:
        """Every task handed over and not taken yet (the worker is stopping)."""
        with self._condition:
            taken, self._handed = list(self._handed), deque()
            return taken

    def hint(self) -> str | None:
        """The id of the oldest enqueued task not handed to a thread yet, or None."""
        with self._condition:
            return self._hints.popleft() if self._hints else None

    def notify_all(self) -> None:
        with self._condition:
            self._tokens = self._limit
            self._condition.notify_all()

    def wait(self, timeout: float) -> bool:
        """Until woken or ``timeout`` seconds passed; True when woken."""
        with self._condition:
            if not self._tokens:
                self.idle += 1
                try:
                    self._condition.wait(timeout)
                finally:
                    self.idle -= 1
            if not self._tokens:
                return False
            self._tokens -= 1
            return True
