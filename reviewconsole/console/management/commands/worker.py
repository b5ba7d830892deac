"""``python manage.py worker``: a task worker process for the scale-out deployment.

Run as many as you like, on as many machines as you like, against one PostgreSQL database: each
thread claims ``run_session`` tasks from django-tasks-db's table with ``SELECT … FOR UPDATE SKIP
LOCKED`` (so no two workers take one task) and runs them; a session's lease keeps two runs of
one session apart; ``--outbound-threads`` more claim outbound deliveries from their own queue
(``outbound``), so a receiver that never answers never holds a thread a run waits for. The
process also sweeps for sessions whose run died (``recovery.py``) every ``--recover-every``
seconds. SIGTERM or Ctrl-C: stop claiming, let running tasks finish (up to ``--grace`` seconds),
exit; a task cut off then is recovered by another worker.

Unlike ``db_worker`` it runs several threads, and they start a task as soon as its enqueue
commits: the enqueue is announced with PostgreSQL ``NOTIFY`` and the process ``LISTEN``s
(``console/task_notify.py``), so the threads poll only every ``REVIEWCONSOLE_TASK_POLL_SECONDS``
(default 2) for deferred tasks come due and notifications lost while the listener reconnected.
Without notifications (SQLite, or ``REVIEWCONSOLE_TASK_NOTIFY_CHANNEL`` empty) they poll every
0.1 s by default, so a decision's resume starts within about that long of its commit.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reviewconsole.console import task_notify
from reviewconsole.console.worker import ThreadWorker
from reviewconsole.workflow_sessions.recovery import RecoveryLoop


class Command(BaseCommand):
    help = "Run session tasks from the database queue, and recover sessions whose run died, until SIGTERM."
    # Checked in handle() instead, also when called with call_command: nothing starts with a
    # broken workflow registry (SystemCheckError names each problem).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--threads", type=int, default=2, help="Worker threads for --queue (default 2).")
        parser.add_argument(
            "--outbound-threads",
            type=int,
            default=1,
            help="Threads delivering outbound events, on their own queue (default 1; 0: another worker does).",
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=None,
            help="Seconds between polls (default REVIEWCONSOLE_TASK_POLL_SECONDS, 2, when PostgreSQL notifications"
            " wake the threads; else 0.1).",
        )
        parser.add_argument(
            "--recover-every", type=float, default=None, help="Seconds between recovery sweeps (default LEASE_TTL/2)."
        )
        parser.add_argument("--grace", type=float, default=30.0, help="Seconds to let running tasks finish on exit.")
        parser.add_argument("--queue", default="default", help="Task queue to take tasks from.")

    def handle(
        self,
        *args: Any,
        threads: int,
        outbound_threads: int,
        interval: float | None,
        recover_every: float | None,
        grace: float,
        queue: str,
        **_: Any,
    ) -> None:
        self.check()
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        if interval is None and not task_notify.enabled():
            interval = 0.1
        worker = ThreadWorker(count=threads, interval=interval, queue=queue, outbound=outbound_threads)
        recovery = RecoveryLoop(interval=recover_every)
        worker.start()
        recovery.start()
        woken = f", woken by NOTIFY on {task_notify.channel()}" if worker.listening else ""
        ready = f"Worker ready: {threads} thread(s), {outbound_threads} outbound"
        ready += f", polling every {worker.interval} s{woken}"
        self.stdout.write(ready, ending="\n")
        self.stdout.flush()
        while not stop.wait(1.0):  # a timed wait, so the signal handler runs promptly
            pass
        self.stdout.write("Stopping: letting running tasks finish…")
        recovery.stop()
        worker.stop(timeout=grace)
        self.stdout.write("Stopped.")
