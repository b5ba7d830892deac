"""A worker that polls once an hour still starts tasks at once on PostgreSQL: enqueues are
announced with ``NOTIFY`` and the worker ``LISTEN``s (``console/task_notify.py``). Its listener
killed with ``pg_terminate_backend`` (and kept out for a moment), it reconnects, claims once what
was queued meanwhile without a notification (``started_at`` after the new connection's start),
and later enqueues wake it again.

The stack's own workers are stopped for the test (the ``healthy`` fixture starts them again for
the next one), so only the slow worker can run a task; its poll (3600 s) is far beyond every
wait below, each of which ends as soon as the state it waits for is reached.
"""

from __future__ import annotations

import json
import signal
import sys
import uuid

import psycopg
import pytest

from reviewconsole.console.task_notify import APPLICATION_NAME
from tests.scaleout.stack_parts import Proc, wait_for

pytestmark = pytest.mark.scaleout

POLL = 3600  # seconds between the slow worker's polls
WAIT = 60  # seconds after which a wait below gives up (far below POLL)

LISTENER = (
    "SELECT pid, backend_start FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s"
)
INSERT_TASK = (
    "INSERT INTO django_tasks_database_dbtaskresult (id, status, enqueued_at, args_kwargs, priority, task_path,"
    " worker_ids, queue_name, backend_name, run_after, exception_class_path, traceback)"
    " VALUES (%s, 'READY', now(), %s, 0, 'reviewconsole.inbox.tasks.notify_new_item', '[]', 'outbound', 'default',"
    " now(), '', '')"
)


def _listeners(stack) -> list[dict]:
    return stack.sql(LISTENER, APPLICATION_NAME)


def _stop(proc: Proc) -> None:
    if proc.alive():
        assert proc.process is not None
        proc.process.send_signal(signal.SIGTERM)
        proc.process.wait(timeout=WAIT)


@pytest.fixture
def slow_worker(healthy):
    """The stack with one worker of one thread polling every :data:`POLL` seconds, and no other."""
    stack = healthy
    for proc in stack.workers:
        _stop(proc)
    wait_for(lambda: not _listeners(stack), WAIT, "the stack's workers' listeners gone")
    args = [sys.executable, "manage.py", "worker", "--threads", "1", "--interval", str(POLL)]
    proc = Proc("slow-worker", args, stack.dir / "slow-worker.log", ready="Worker ready")
    stack.launch(proc)
    try:
        stack.wait_ready(proc)
        assert f"polling every {float(POLL)} s, woken by NOTIFY" in proc.log.read_text()
        yield stack
    finally:
        _stop(proc)


def test_a_worker_polling_hourly_runs_enqueued_tasks_at_once_and_again_after_its_listener_is_killed(slow_worker):
    stack = slow_worker
    [first] = wait_for(lambda: _listeners(stack), WAIT, "the worker listening")

    sid = stack.start_probe(label="notified")  # the web process enqueues its run: NOTIFY
    stack.wait_status(sid, "waiting", timeout=WAIT)

    # The listener's connection killed, and none allowed for a moment: a task queued meanwhile
    # (here with no notification at all) is claimed once the listener is back. It is queued for
    # the outbound thread, which nothing else has woken since the worker started (the session's
    # tasks are the default queue's), so only the reconnect's claim can take it.
    with psycopg.connect(stack.server_url, autocommit=True) as server:  # not the stack's database: that is refused
        server.execute(f'ALTER DATABASE "{stack.db_name}" ALLOW_CONNECTIONS false')
        try:
            stack.sql("SELECT pg_terminate_backend(%s)", first["pid"])
            wait_for(lambda: not _listeners(stack), WAIT, "the listener's connection gone")
            task_id = str(uuid.uuid4())
            stack.sql(INSERT_TASK, task_id, json.dumps({"args": [0], "kwargs": {}}))
        finally:
            server.execute(f'ALTER DATABASE "{stack.db_name}" ALLOW_CONNECTIONS true')
    [again] = wait_for(lambda: _listeners(stack), WAIT, "the listener reconnected")
    assert again["pid"] != first["pid"]
    task = "SELECT status, started_at FROM django_tasks_database_dbtaskresult WHERE id = %s"
    [row] = wait_for(lambda: [r for r in stack.sql(task, task_id) if r["status"] == "SUCCESSFUL"], WAIT, "task run")
    assert row["started_at"] >= again["backend_start"]  # claimed after the reconnect, not before

    sid = stack.start_probe(label="notified again")
    stack.wait_status(sid, "waiting", timeout=WAIT)
