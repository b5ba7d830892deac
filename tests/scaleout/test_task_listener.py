"""Task notifications on PostgreSQL (``console/task_notify.py``), in-process on the test run's
database: an enqueue is announced when its transaction commits and never for a rollback, a
listener takes the notifications of other processes and skips its own, and one whose connection
is killed reconnects and says so (``on_connect``, where the worker claims once).

Every wait ends on the event it waits for; :data:`WAIT` only bounds a wait that would never end.
Notifications of one session arrive in the order they were sent, which is what lets a skipped or
rolled-back one be checked without waiting for its absence: the next event is a later one.
"""

from __future__ import annotations

import queue

import pytest
from django.db import connection, transaction

from reviewconsole.console import task_notify
from reviewconsole.console.task_notify import TaskListener
from tests.outbound.test_retries import DB_TASKS, _reset_task_backends

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]

WAIT = 30.0


@pytest.fixture
def listener(postgres):
    """A started :class:`TaskListener` and the queue of what it reported: ``("connect",)`` per
    (re)connect, ``("notify", task id, queue)`` per notification it passed on."""
    events: queue.Queue[tuple[str, ...]] = queue.Queue()
    running = TaskListener(
        on_notify=lambda task_id, name: events.put(("notify", task_id, name)),
        on_connect=lambda: events.put(("connect",)),
    )
    running.start()
    yield running, events
    running.stop()
    assert running.backend_pid is None


def test_a_listener_passes_on_other_processes_notifications_and_reconnects_when_killed(listener):
    running, events = listener
    assert events.get(timeout=WAIT) == ("connect",)
    task_notify.notify("own", "default")  # this process's: its enqueues woke its threads already
    task_notify.notify("theirs", "default", origin="another-process")
    task_notify.notify("requeued", "outbound", origin="")  # the task keeper's: every process's
    assert events.get(timeout=WAIT) == ("notify", "theirs", "default")
    assert events.get(timeout=WAIT) == ("notify", "requeued", "outbound")

    killed = running.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [killed])
    assert events.get(timeout=WAIT) == ("connect",)
    assert running.backend_pid not in (None, killed)
    task_notify.notify("later", "default", origin="another-process")
    assert events.get(timeout=WAIT) == ("notify", "later", "default")


def test_an_enqueue_is_announced_when_its_transaction_commits(listener, monkeypatch, settings):
    from reviewconsole.inbox.tasks import notify_new_item

    _, events = listener
    assert events.get(timeout=WAIT) == ("connect",)
    monkeypatch.setattr(task_notify, "ORIGIN", "the listener")  # so it takes this process's enqueues
    settings.TASKS = DB_TASKS  # the database backend (the test run's runs tasks at once)
    _reset_task_backends()
    try:
        with transaction.atomic():
            notify_new_item.enqueue(1)
            transaction.set_rollback(True)
        with transaction.atomic():
            committed = notify_new_item.enqueue(2).id
    finally:
        _reset_task_backends()
    assert events.get(timeout=WAIT) == ("notify", committed, "default")  # not the rolled-back one
