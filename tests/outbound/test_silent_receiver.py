"""A receiver that accepts the connection and never answers does not starve session runs.

On the embedded default ``serve`` runs its tasks on worker threads in its own process. Outbound
deliveries are tasks on a queue of their own (``outbound.tasks.QUEUE``) served by threads of
their own, so however long a delivery waits for its receiver (up to ``OUTBOUND_TIMEOUT``), the
``run_session`` threads are free for runs. Here two deliveries hang on a socket that never
answers while a session started after them runs to its first interrupt.
"""

from __future__ import annotations

import socket
import threading

import pytest
from django.db import transaction
from django.tasks.signals import task_finished

from reviewconsole.outbound.models import Attempt, OutboundMessage, Subscription
from reviewconsole.outbound.services import event_emit
from reviewconsole.workflow_sessions.services import session_start
from reviewconsole.workflow_sessions.tasks import run_session
from tests.conftest import COMPLAINT
from tests.outbound.test_retries import _reset_task_backends

pytestmark = pytest.mark.django_db(transaction=True)  # worker threads read what the test committed

WAIT = 30.0
"""Seconds after which a wait gives up, so that a starved run fails the test instead of hanging it."""


class SilentReceiver:
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        self.accepted = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.getsockname()[:2]
        return f"http://{host}:{port}/events"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed
                return
            self.connections.append(conn)
            self.accepted.set()

    def close(self) -> None:
        self.server.close()
        for conn in self.connections:
            conn.close()


@pytest.fixture
def silent():
    receiver = SilentReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def db_worker(settings):
    """The embedded default's worker: django-tasks-db and ``serve``'s threads (two for runs)."""
    from reviewconsole.console.worker import ThreadWorker

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "outbound"]}}
    # Longer than this test waits: before outbound deliveries had threads of their own, the two
    # hanging deliveries held both run threads past WAIT.
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "OUTBOUND_TIMEOUT": 4 * WAIT}
    _reset_task_backends()
    worker = ThreadWorker(count=2, interval=0.05)
    yield worker
    worker.stop()
    _reset_task_backends()


def test_a_run_does_not_wait_behind_deliveries_to_a_receiver_that_never_answers(demo_tx, silent, db_worker):
    Subscription.objects.create(name="silent", url=silent.url, events=["session.completed"])
    with transaction.atomic():
        for n in range(2):
            event_emit(event_type="session.completed", workflow="email-review", data={"session_id": f"s{n}"})
    ran = threading.Event()

    def finished(*, task_result, **kwargs):
        if task_result.task.module_path == run_session.module_path:
            ran.set()

    task_finished.connect(finished, weak=False)
    try:
        db_worker.start()
        assert silent.accepted.wait(WAIT), "no delivery reached the receiver"
        with transaction.atomic():
            session = session_start(workflow="email-review", data={"complaint": COMPLAINT}, user_id="test")
        assert ran.wait(WAIT), "the session's run waited behind the hanging deliveries"
    finally:
        task_finished.disconnect(finished)
        silent.close()  # the hanging deliveries end (no answer: a failed attempt, retried later)
    session.refresh_from_db()
    assert session.status == "waiting"
    assert session.session_interrupts.filter(status="pending").exists()
    assert silent.connections, "the deliveries were under way"
    assert OutboundMessage.objects.filter(status="pending").count() == 2
    assert not Attempt.objects.filter(status_code__isnull=False).exists()  # no receiver ever answered


def test_a_backend_without_the_outbound_queue_is_warned_of_and_deliveries_go_to_default(settings):
    from reviewconsole.outbound.checks import outbound_queue
    from reviewconsole.outbound.tasks import QUEUE, delivery_queue

    assert (delivery_queue(), outbound_queue()) == (QUEUE, [])
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    _reset_task_backends()
    try:
        assert [m.id for m in outbound_queue()] == ["outbound.W001"]
        assert delivery_queue() == "default"  # stored and delivered all the same, never refused
    finally:
        _reset_task_backends()
