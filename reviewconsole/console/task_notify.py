"""Task enqueues announced with PostgreSQL ``NOTIFY``, so that worker processes wait for them
instead of polling the task table.

On PostgreSQL, with ``REVIEWCONSOLE['TASK_NOTIFY_CHANNEL']`` not empty (:func:`enabled`), an
enqueue of a ready task of django-tasks-db's ``default`` backend runs ``SELECT pg_notify(<channel>,
'<task id> <origin> <queue>')`` on the task row's connection (:func:`notify`): inside the
enqueue's transaction when there is one, so the notification is delivered when that commits and
never for a rollback. A process announces the enqueues of the queues it does not run itself
(:func:`announce_enqueued`, connected to ``task_enqueued`` by the console app: every enqueue of
a web process); a :class:`~reviewconsole.console.worker.ThreadWorker` announces those of its own
queues (:func:`serve` tells this module which), except a task it claimed for itself in the
enqueue's transaction. A deferred task (``run_after`` in the future) is not announced: the
threads' poll takes it when due. The task keeper announces the tasks of dead workers it puts back
to ``READY`` with no origin (``task_recovery.py``).

Each worker process holds one autocommit connection that ``LISTEN``s (:class:`TaskListener`, a
daemon thread) and hands every notification to the worker, which wakes a thread of its queue with
the task's id as an in-process enqueue does. Notifications from the listening process itself are
skipped (its enqueues woke its threads already); those with no origin are not.

Notifications are not stored: those sent while the listener is disconnected are lost. So after
every (re)connect the listener asks the worker to claim once (``on_connect``), and the threads
still poll every ``TASK_POLL_SECONDS`` (default 2), which also takes deferred tasks as they come
due. The listener reconnects after a lost connection (a PostgreSQL restart,
``pg_terminate_backend``) with a back-off of 0.5 s doubling to 5 s; libpq's TCP keepalives
(unless ``DATABASES`` sets them) notice a server gone without closing the connection. The
connection is one more per worker process for ``max_connections``; it shows in
``pg_stat_activity`` as ``application_name`` :data:`APPLICATION_NAME`. PostgreSQL serializes the
commits of transactions that sent a notification (one lock for the whole server, held until the
commit): a known limit at high commit rates, not one at this console's few enqueues per second
(not measured separately here).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections, router
from django.tasks import TaskResult
from django.utils import timezone
from django.utils.crypto import get_random_string
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult
from psycopg import sql

logger = logging.getLogger("reviewconsole.worker")

__all__ = [
    "APPLICATION_NAME",
    "ORIGIN",
    "TaskListener",
    "announce_enqueued",
    "channel",
    "enabled",
    "notify",
    "poll_seconds",
    "serve",
]

ORIGIN = get_random_string(12)
"""This process, in the payloads it sends (a random token: process ids repeat across machines)."""

APPLICATION_NAME = "reviewconsole-task-listener"
"""The listener connection's ``application_name`` (``pg_stat_activity``)."""

RETRY_FIRST, RETRY_MAX = 0.5, 5.0
"""Seconds the listener waits before its first reconnect after a failure, and at most (doubling)."""

WAIT_SLICE = 1.0
"""Seconds the listener waits for notifications before it looks whether it is to stop."""

KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
"""libpq keepalives of the listener connection (seconds), unless ``DATABASES`` sets its own."""

_served: Counter[str] = Counter()
"""Queues a running ThreadWorker of this process announces itself (a count: tests run several)."""
_served_lock = threading.Lock()


def channel() -> str:
    """``REVIEWCONSOLE['TASK_NOTIFY_CHANNEL']``: the channel's name, or ``""`` (off)."""
    return str(settings.REVIEWCONSOLE["TASK_NOTIFY_CHANNEL"])


def poll_seconds() -> float:
    """``REVIEWCONSOLE['TASK_POLL_SECONDS']``: seconds between a thread's polls while notifications
    wake it."""
    return float(settings.REVIEWCONSOLE["TASK_POLL_SECONDS"])


def _using() -> str:
    """The database alias of django-tasks-db's table."""
    return str(router.db_for_write(DBTaskResult))


def enabled() -> bool:
    """True when the task table is on PostgreSQL and the channel is set (no query)."""
    return bool(channel()) and connections[_using()].vendor == "postgresql"


def notify(task_id: str, queue: str, *, origin: str = ORIGIN) -> None:
    """``pg_notify`` the channel that task ``task_id`` of ``queue`` is ready, on the task table's
    connection in this thread (in its transaction, if one is open: sent when it commits).
    ``origin=""``: every listener takes it, this process's too. Raises the database's errors
    (``django.db.DatabaseError``); only call it when :func:`enabled`."""
    with connections[_using()].cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [channel(), f"{task_id} {origin} {queue}"])


def serve(queues: Iterable[str], *, serving: bool = True) -> None:
    """A ThreadWorker of this process starts (``serving``) or stops announcing ``queues`` itself."""
    with _served_lock:
        for queue in queues:
            _served[queue] += 1 if serving else -1
            if _served[queue] <= 0:
                del _served[queue]


def announce_enqueued(sender: type, task_result: TaskResult | None = None, **kwargs: Any) -> None:
    """``task_enqueued``: :func:`notify` a ready task of the database backend ``default`` whose
    queue no ThreadWorker of this process runs (see the module docstring)."""
    if task_result is None or task_result.backend != "default" or not issubclass(sender, DatabaseBackend):
        return
    run_after = task_result.task.run_after
    if (run_after is not None and run_after > timezone.now()) or not enabled():
        return
    with _served_lock:
        if _served[task_result.task.queue_name] > 0:
            return
    notify(task_result.id, task_result.task.queue_name)


class TaskListener:
    """A daemon thread that ``LISTEN``s on the channel over a connection of its own until
    :meth:`stop`, reconnecting when it is lost (see the module docstring).

    ``on_notify(task_id, queue)`` is called on the thread for each notification from another
    process or with no origin; ``on_connect()`` after each (re)connect, once ``LISTEN`` took
    effect. An exception raised by either is logged and the connection opened again.
    :attr:`backend_pid` is the listening connection's server process id, None while it has none.
    """

    def __init__(self, *, on_notify: Callable[[str, str], None], on_connect: Callable[[], None]) -> None:
        self.backend_pid: int | None = None
        self._on_notify = on_notify
        self._on_connect = on_connect
        self._channel = channel()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="task-listener", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop listening and close the connection (within :data:`WAIT_SLICE` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _connect(self) -> psycopg.Connection[Any]:
        params = {**KEEPALIVES, **connections[_using()].get_connection_params()}
        params.setdefault("application_name", APPLICATION_NAME)
        return psycopg.connect(**params, autocommit=True)

    def _run(self) -> None:
        delay, lost = RETRY_FIRST, False
        while not self._stop.is_set():
            try:
                with self._connect() as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    self.backend_pid = conn.info.backend_pid
                    if lost:
                        logger.warning("Task listener: listening again on %r", self._channel)
                    delay, lost = RETRY_FIRST, False
                    self._on_connect()
                    self._listen(conn)  # until stop()
                break
            except psycopg.Error as exc:  # the server went away, or refuses connections for now
                if not lost:
                    logger.warning("Task listener: no connection (%s); reconnecting", str(exc).strip())
            except Exception:
                logger.exception("Task listener: a notification's wake-up failed; reconnecting")
            self.backend_pid, lost = None, True
            self._stop.wait(delay)
            delay = min(delay * 2, RETRY_MAX)
        self.backend_pid = None

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stop.is_set():
            for note in conn.notifies(timeout=WAIT_SLICE):
                parts = note.payload.split(" ", 2)  # "<task id> <origin> <queue>"; anything else is skipped
                if len(parts) == 3 and parts[0] and parts[1] != ORIGIN:
                    self._on_notify(parts[0], parts[2])
