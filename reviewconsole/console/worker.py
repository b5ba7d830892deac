"""The task worker that runs inside the console process (the embedded default) and in ``manage.py worker``.

Each thread claims tasks the way django-tasks-db's ``db_worker`` does (a locked select, then a
claim) and runs them with its ``Worker.run_task``. django-tasks-db 0.13 has no public API for
"claim one task" or "run this task" outside its ``db_worker`` loop (which sleeps a fixed interval
and runs one task at a time), so this module uses the pieces that loop is made of:
``DBTaskResult.objects.ready()``, ``DBTaskResultQuerySet.get_locked()``, ``DBTaskResult.claim()``,
``utils.exclusive_transaction``, ``utils.is_locked_database_exception`` and ``Worker.run_task``.
``tests/console/test_task_seam.py`` pins their names and signatures in the installed version,
so an upgrade that changes them fails loudly.

Instead of sleeping a fixed interval a thread waits on an event that ``task_enqueued`` sets, so
a task enqueued in this process starts at once; it still polls every ``interval`` seconds for
tasks enqueued by other processes. Outbound deliveries (``outbound.tasks.QUEUE``) are claimed by
threads of their own (``outbound``), so a receiver that never answers holds one of those, never
a thread a session's run waits for. The process keeps a heartbeat and sweeps for tasks left
``RUNNING`` by dead workers (:class:`~reviewconsole.console.task_recovery.TaskKeeper`); its
threads claim as ``<process id>/<n>``.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections
from django.db.utils import OperationalError
from django.tasks.signals import task_enqueued
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from ..outbound.tasks import QUEUE as OUTBOUND_QUEUE
from .task_recovery import TaskKeeper

logger = logging.getLogger("reviewconsole.worker")

__all__ = ["ThreadWorker"]


class ThreadWorker:
    """``count`` worker threads on ``queue`` and ``outbound`` threads on the outbound deliveries'
    queue, until :meth:`stop`; ``interval`` in seconds."""

    def __init__(self, *, count: int = 1, interval: float = 0.5, queue: str = "default", outbound: int = 1) -> None:
        self.interval = interval
        self.queue = queue
        self.running = False
        self.worker_id = f"console-{get_random_string(12)}"
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        # (queue, worker id suffix, thread name) per thread; the suffix keeps "<process id>/<n>".
        self._plan = [(queue, str(n), f"task-worker-{n}") for n in range(count)] + [
            (OUTBOUND_QUEUE, f"outbound-{n}", f"outbound-worker-{n}") for n in range(outbound)
        ]
        self._keeper = TaskKeeper(self.worker_id)

    def _on_enqueue(self, **kwargs: object) -> None:
        self._wake.set()

    def _claim(self, worker_id: str, queue: str) -> DBTaskResult | None:
        tasks = DBTaskResult.objects.ready().filter(backend_name="default", queue_name=queue)
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

    def _loop(self, worker_id: str, queue: str) -> None:
        runner = Worker(
            queue_names=[queue],
            interval=self.interval,
            batch=False,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id=worker_id,
            excluded_queue_names=[],
        )
        while self.running:
            close_old_connections()
            try:
                task_result = self._claim(worker_id, queue)
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
            self._wake.wait(self.interval)
            self._wake.clear()
        close_old_connections()

    def start(self) -> None:
        self.running = True
        self._keeper.start()
        task_enqueued.connect(self._on_enqueue, weak=False)
        for queue, suffix, name in self._plan:
            thread = threading.Thread(
                target=self._loop, args=(f"{self.worker_id}/{suffix}", queue), name=name, daemon=True
            )
            thread.start()
            self._threads.append(thread)
        logger.info("Started %d task worker thread(s) as %s", len(self._threads), self.worker_id)

    def stop(self, timeout: float = 10.0) -> None:
        self.running = False
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)
        task_enqueued.disconnect(self._on_enqueue)
        self._keeper.stop()
