"""Tasks survive crashes: a django-tasks-db task left ``RUNNING`` by a dead worker runs again.

django-tasks-db marks a claimed task ``RUNNING`` and appends the worker's id to ``worker_ids``;
a worker killed with ``kill -9`` (or a lost machine) never marks it finished, and nothing in
django-tasks-db 0.13 runs it again. Here every worker process keeps a heartbeat
(:class:`~reviewconsole.console.models.WorkerHeartbeat`, written every ``TASK_LEASE / 3`` s) and
its threads claim as ``<process id>/<n>``. :func:`requeue_stale_tasks`, run by every worker
process's :class:`TaskKeeper`, puts back to ``READY`` each ``RUNNING`` task that started more
than ``TASK_LEASE`` seconds ago and whose last worker has no heartbeat newer than that (a worker
that is not ours, e.g. ``db_worker``, has none: its tasks count as dead after ``TASK_LEASE``).

A task is claimed at most ``TASK_MAX_CLAIMS`` times: one that has killed that many workers is
marked ``FAILED`` with :class:`WorkerLost` instead of being queued again (kept, not dropped).
A ``run_session`` task is not queued again but closed the same way: its session's lease expires
and ``workflow_sessions/recovery.py`` runs the session again from its last checkpoint (queuing
the task as well would start two runs of one session, one of them for nothing).
The tasks queued again are written to be run twice (at least once): ``deliver_message`` claims
each attempt and keeps the message's ``webhook-id``, ``notify_new_item`` skips the people whose
mail was recorded.

Finished tasks do not pile up: the keeper deletes ``SUCCESSFUL`` rows finished more than
:data:`TASK_KEEP` ago, at most once every :data:`PRUNE_EVERY` seconds (:func:`prune_finished_tasks`);
a ``FAILED`` row is kept (the traceback someone has to look at), as the outbox keeps the rows it gave up.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from . import task_notify
from .models import WorkerHeartbeat

logger = logging.getLogger("reviewconsole.worker")

__all__ = [
    "HEARTBEAT_KEEP",
    "PRUNE_EVERY",
    "TASK_KEEP",
    "TaskKeeper",
    "WorkerLost",
    "heartbeat",
    "process_of",
    "prune_finished_tasks",
    "prune_heartbeats",
    "requeue_stale_tasks",
    "task_lease",
]

RUNNING, READY, FAILED, SUCCESSFUL = "RUNNING", "READY", "FAILED", "SUCCESSFUL"
"""django-tasks-db's ``TaskResultStatus`` values this module reads and writes (pinned by a test)."""


class WorkerLost(Exception):
    """Recorded on a task whose worker died ``TASK_MAX_CLAIMS`` times while running it."""


def task_lease() -> float:
    """Seconds a worker's heartbeat stays good (``REVIEWCONSOLE['TASK_LEASE']``)."""
    return float(settings.REVIEWCONSOLE["TASK_LEASE"])


def _max_claims() -> int:
    return int(settings.REVIEWCONSOLE["TASK_MAX_CLAIMS"])


def process_of(worker_id: str) -> str:
    """The process part of a thread's worker id (``"console-ab12/0"`` → ``"console-ab12"``)."""
    return worker_id.split("/", 1)[0]


def heartbeat(worker_id: str, *, started_at: dt.datetime, now: dt.datetime | None = None) -> None:
    """Write the process ``worker_id``'s heartbeat (``now``, default the current time)."""
    now = now or timezone.now()
    WorkerHeartbeat.objects.update_or_create(
        worker_id=worker_id,
        defaults={"beat_at": now, "host": socket.gethostname()[:255], "pid": os.getpid(), "started_at": started_at},
    )


RUN_AGAIN_ELSEWHERE = {
    "reviewconsole.workflow_sessions.tasks.run_session": "its session is run again by its lease's recovery",
}
"""Task paths whose work is picked up again by a recovery of their own: closed, not queued again."""

HEARTBEAT_KEEP = dt.timedelta(days=1)
"""How long the heartbeat of a worker that died stays (for the admin's eyes); a task whose worker's
row is gone counts as dead all the same."""


def prune_heartbeats(*, now: dt.datetime | None = None) -> int:
    """Delete heartbeats older than :data:`HEARTBEAT_KEEP`; returns how many."""
    now = now or timezone.now()
    deleted, _ = WorkerHeartbeat.objects.filter(beat_at__lt=now - HEARTBEAT_KEEP).delete()
    return deleted


TASK_KEEP = dt.timedelta(days=7)
"""How long a task that succeeded stays in the table (the outbox keeps its published rows as long)."""

PRUNE_EVERY = 3600.0
"""Seconds between one keeper's prunes of finished tasks."""

PRUNE_BATCH = 1000
"""Rows deleted per statement by :func:`prune_finished_tasks` (a short write lock each)."""


def prune_finished_tasks(*, now: dt.datetime | None = None, batches: int = 10) -> int:
    """Delete ``SUCCESSFUL`` tasks finished more than :data:`TASK_KEEP` ago, at most ``batches``
    statements of :data:`PRUNE_BATCH` rows (the rest goes at the next prune); returns how many.
    Tasks ``READY``, ``RUNNING`` or ``FAILED`` are never deleted."""
    cutoff = (now or timezone.now()) - TASK_KEEP
    old = DBTaskResult.objects.filter(status=SUCCESSFUL, finished_at__lt=cutoff)
    deleted = 0
    for _ in range(batches):
        ids = list(old.values_list("pk", flat=True)[:PRUNE_BATCH])
        if not ids:
            break
        count, _ = DBTaskResult.objects.filter(pk__in=ids, status=SUCCESSFUL).delete()
        deleted += count
        if len(ids) < PRUNE_BATCH:
            break
    return deleted


def requeue_stale_tasks(*, now: dt.datetime | None = None, lease: float | None = None) -> list[str]:
    """Queue again every ``RUNNING`` task whose worker is dead (see the module docstring).

    Returns the ids of the tasks changed (queued again or failed). The UPDATE is conditional on
    the row as read (status and ``started_at``, which every claim sets), so of several processes
    sweeping at once one changes a given task, and a task finished meanwhile is left alone. A task
    queued again is announced to every worker process, this one's too (``task_notify``), when
    notifications are on.
    """
    now = now or timezone.now()
    lease = task_lease() if lease is None else lease
    cutoff = now - dt.timedelta(seconds=lease)
    rows = list(
        DBTaskResult.objects.filter(status=RUNNING, started_at__lt=cutoff).values_list(
            "id", "worker_ids", "started_at", "task_path", "queue_name"
        )[:500]
    )
    if not rows:
        return []
    alive = set(WorkerHeartbeat.objects.filter(beat_at__gte=cutoff).values_list("worker_id", flat=True))
    changed: list[str] = []
    announce = task_notify.enabled()
    for task_id, worker_ids, started_at, task_path, queue in rows:
        last = worker_ids[-1] if worker_ids else ""
        if process_of(last) in alive:
            continue
        same = DBTaskResult.objects.filter(pk=task_id, status=RUNNING, started_at=started_at)
        elsewhere = RUN_AGAIN_ELSEWHERE.get(task_path)
        if elsewhere or len(worker_ids) >= _max_claims():
            why = elsewhere or f"{len(worker_ids)} times; not queued again"
            outcome = f"closed it ({why})"
            done = same.update(
                status=FAILED,
                finished_at=now,
                return_value=None,
                exception_class_path=f"{WorkerLost.__module__}.{WorkerLost.__qualname__}",
                traceback=f"WorkerLost: the worker died while running this task ({why})\n",
            )
        else:
            outcome = "queued it again"
            done = same.update(status=READY, started_at=None)
            if done and announce:
                task_notify.notify(str(task_id), queue, origin="")
        if done:
            changed.append(str(task_id))
            logger.warning("Task %s (%s) was left running by dead worker %s; %s", task_id, task_path, last, outcome)
    return changed


class TaskKeeper:
    """A daemon thread: the heartbeat of process ``worker_id``, then :func:`requeue_stale_tasks`,
    every ``TASK_LEASE / 3`` seconds until :meth:`stop` (which deletes the heartbeat: a worker that
    stops cleanly has finished its tasks); :func:`prune_finished_tasks` at its first turn and then
    every :data:`PRUNE_EVERY` seconds."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.interval = max(0.1, task_lease() / 3)
        self._started_at = timezone.now()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pruned_at = float("-inf")  # time.monotonic() of the last prune of finished tasks

    def beat(self) -> None:
        """One turn: heartbeat, sweep, prune. Never raises (the database may be away for a while)."""
        close_old_connections()
        try:
            heartbeat(self.worker_id, started_at=self._started_at)
            requeue_stale_tasks()
            prune_heartbeats()
            if time.monotonic() - self._pruned_at >= PRUNE_EVERY:
                self._pruned_at = time.monotonic()
                prune_finished_tasks()
        except Exception:
            logger.exception("Task keeper: heartbeat or sweep failed")

    def _loop(self) -> None:
        self.beat()  # at once: alive from the start
        while not self._stop.wait(self.interval):
            self.beat()
        try:
            WorkerHeartbeat.objects.filter(worker_id=self.worker_id).delete()
        except Exception:
            logger.exception("Task keeper: could not remove the heartbeat of %s", self.worker_id)
        close_old_connections()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="task-keeper", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
