"""Attempts on the database task backend: retries with exponential back-off, failures, redeliver."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django_tasks_db.models import DBTaskResult

from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.worker import task_runner
from reviewconsole.outbound.services import backoff_seconds, event_emit

pytestmark = pytest.mark.django_db(transaction=True)  # retries are enqueued when their own commits happen

DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


@pytest.fixture
def db_tasks(settings):
    settings.TASKS = DB_TASKS
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "OUTBOUND_BACKOFF": 0.05, "OUTBOUND_MAX_ATTEMPTS": 3}
    _reset_task_backends()
    yield
    _reset_task_backends()


def _reset_task_backends():
    """Make ``django.tasks`` read ``TASKS`` again (it caches the backends)."""
    from asgiref.local import Local
    from django.tasks import task_backends

    task_backends.__dict__.pop("settings", None)
    task_backends._connections = Local(task_backends.thread_critical)


def _run_ready_tasks():
    """What the database worker does: run every task whose ``run_after`` has come; returns how many."""
    worker = task_runner("test-worker")
    ran = 0
    for result in DBTaskResult.objects.ready().filter(queue_name="default"):
        result.claim("test-worker")
        worker.run_task(result)
        ran += 1
    return ran


def _deliver_until_done(message, deadline=10.0):
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        _run_ready_tasks()
        message.refresh_from_db()
        if message.status != "pending":
            return
        time.sleep(0.02)


def _emit(on_commit):
    with on_commit():
        (message,) = event_emit(event_type="session.completed", workflow="email-review", data={"session_id": "s1"})
    return message


def test_backoff_doubles():
    from django.conf import settings

    base = settings.REVIEWCONSOLE["OUTBOUND_BACKOFF"]
    assert [backoff_seconds(n) for n in (1, 2, 3, 4)] == [base, base * 2, base * 4, base * 8]


def test_it_retries_with_backoff_until_delivered(db_tasks, subscription, receiver, on_commit):
    receiver.statuses = [500, 503]
    message = _emit(on_commit)
    _run_ready_tasks()
    message.refresh_from_db()
    assert (message.status, message.attempts) == ("pending", 1)
    retry = DBTaskResult.objects.filter(status="READY").get()
    assert retry.run_after >= message.attempt_log.get().at + dt.timedelta(seconds=0.04)  # run_after, not now
    _deliver_until_done(message)
    assert message.status == "delivered"
    attempts = list(message.attempt_log.values_list("number", "status_code"))
    assert attempts == [(1, 500), (2, 503), (3, 200)]
    times = list(message.attempt_log.values_list("at", flat=True))
    # Each wait is at least its back-off (base, then twice it); a busy worker only adds to a wait,
    # so comparing the two observed waits with each other would test the machine's load.
    assert times[1] - times[0] >= dt.timedelta(seconds=backoff_seconds(1))
    assert times[2] - times[1] >= dt.timedelta(seconds=backoff_seconds(2))
    assert len(receiver.received) == 3
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1  # the same message id every time


def test_it_fails_after_the_last_attempt_and_an_admin_redelivers(
    db_tasks, subscription, receiver, on_commit, client, django_user_model
):
    receiver.statuses = [500, 500, 500]
    message = _emit(on_commit)
    _deliver_until_done(message)
    assert (message.status, message.attempts) == ("failed", 3)
    assert "HTTP 500" in message.last_error

    root = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-1234")
    client.force_login(root)
    page = client.get("/admin/outbound/outboundmessage/", {"status__exact": "failed"})
    assert message.pk in page.content.decode()
    with on_commit():
        response = client.post(
            "/admin/outbound/outboundmessage/", {"action": "redeliver", "_selected_action": [message.pk]}
        )
    assert response.status_code == 302
    _deliver_until_done(message)
    assert (message.status, message.attempts) == ("delivered", 4)
    assert AuditEntry.objects.filter(action="outbound.redeliver", target_id=message.pk).exists()


def test_the_auditor_cannot_redeliver(db_tasks, subscription, receiver, on_commit, client, auditor):
    receiver.statuses = [500, 500, 500]
    message = _emit(on_commit)
    _deliver_until_done(message)
    client.force_login(auditor)
    page = client.get("/admin/outbound/outboundmessage/")
    assert page.status_code == 200
    assert b'value="redeliver"' not in page.content
    client.post("/admin/outbound/outboundmessage/", {"action": "redeliver", "_selected_action": [message.pk]})
    message.refresh_from_db()
    assert (message.status, message.attempts) == ("failed", 3)


def test_a_run_again_after_a_recorded_2xx_sends_nothing(db_tasks, subscription, receiver, on_commit):
    from reviewconsole.outbound.services import message_deliver

    message = _emit(on_commit)
    _deliver_until_done(message)
    assert message.status == "delivered"
    assert message_deliver(message_id=message.pk) == "delivered"  # the task run again after a crash
    assert len(receiver.received) == 1
    assert list(message.attempt_log.values_list("number", "status_code")) == [(1, 200)]


def test_an_attempt_cut_off_mid_send_is_logged_and_sent_again_with_the_same_id(
    db_tasks, subscription, receiver, on_commit
):
    from reviewconsole.console.task_recovery import requeue_stale_tasks
    from reviewconsole.outbound.models import OutboundMessage
    from reviewconsole.outbound.services import INTERRUPTED

    message = _emit(on_commit)
    # What a worker killed during its POST leaves: its task RUNNING, attempt 1 claimed, not recorded.
    DBTaskResult.objects.ready().get().claim("console-dead/0")
    OutboundMessage.objects.filter(pk=message.pk).update(attempts=1)
    assert len(requeue_stale_tasks(lease=0)) == 1  # no heartbeat: dead
    _deliver_until_done(message)
    assert (message.status, message.attempts) == ("delivered", 2)
    assert list(message.attempt_log.values_list("number", "status_code", "error")) == [
        (1, None, INTERRUPTED),
        (2, 200, ""),
    ]
    assert [r.headers["webhook-id"] for r in receiver.received] == [message.pk]


def test_a_second_task_for_an_attempt_in_flight_logs_no_interruption(db_tasks, subscription, receiver, on_commit):
    """A redeliver while attempt 1 is still being sent: attempt 2 goes out, attempt 1 is not called cut off."""
    from reviewconsole.outbound.models import OutboundMessage

    message = _emit(on_commit)
    OutboundMessage.objects.filter(pk=message.pk).update(attempts=1)  # attempt 1 in flight elsewhere
    _deliver_until_done(message)
    assert list(message.attempt_log.values_list("number", "status_code")) == [(2, 200)]
