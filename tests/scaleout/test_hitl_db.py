"""H12 and H23 on the real database: SQLite in ``./test``, PostgreSQL in the scale-out run.

- H12: an answer posted within a millisecond of the pause (right after the pausing commit, the
  run still holding the lease) is stored and applied once; one posted before the pause is
  committed is refused as retryable. Writers are ordered by the session's version counter.
- H23 (PostgreSQL only): another connection holds a row lock on the item (or its session) while
  a reviewer decides: a clean 409 "busy" with ``Retry-After`` after ``lock_timeout``, no 500, no
  transaction left open, nothing stored; once the lock is gone the same decision goes through.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from asgiref.sync import async_to_sync
from django.db import connection

from engine import START, Commit, ConcurrencyError, RequestInput, Runner, SessionStatus, Workflow
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, WorkflowSession
from reviewconsole.workflow_sessions.store import OrmStore
from tests.engine.helpers import Counts

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]


class PausingStore(OrmStore):
    """Runs ``on_pause`` right after the commit that pauses a session, the lease still held."""

    on_pause: Any = None

    async def commit(self, session_id: str, commit: Commit):
        record = await super().commit(session_id, commit)
        hook, self.on_pause = self.on_pause, None
        if hook is not None and commit.pause:
            await hook()
        elif hook is not None:
            self.on_pause = hook
        return record


def _asking_workflow(counts: Counts) -> Workflow:
    def ask():
        counts.hit("ask")
        return RequestInput(interrupt_id="result", message="waiting for the tool's result")

    def after(node_input):
        counts.hit("after")
        return f"got {node_input}"

    return Workflow("h12", edges=[(START, ask, after)])


def test_h12_a_result_posted_right_after_the_pause_is_stored_and_applied_once(demo_tx):
    counts = Counts()
    store = PausingStore()
    runner = Runner(_asking_workflow(counts), store, lease_ttl=5)
    session = async_to_sync(runner.create_session)()
    seen: dict[str, Any] = {}

    async def post_result():
        started = time.perf_counter()
        await runner.submit(session.id, {"result": {"status": "approved"}})
        seen["submit_ms"] = (time.perf_counter() - started) * 1000
        seen["other"] = await runner.run_pending(session.id)  # another worker: finds the lease taken

    store.on_pause = post_result
    result = async_to_sync(runner.run)(session.id, "go")
    assert seen["other"].status == SessionStatus.WAITING
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"ask": 1, "after": 1}
    assert Answer.objects.filter(session_id=session.id, applied_at__isnull=True).count() == 0
    assert Answer.objects.filter(session_id=session.id).count() == 1
    assert Item.objects.get(session_id=session.id).status == "resolved"


def test_h12_writers_are_ordered_by_the_version_counter(demo_tx):
    store = OrmStore()
    runner = Runner(_asking_workflow(Counts()), store)
    session = async_to_sync(runner.create_session)()
    async_to_sync(runner.run)(session.id, "go")
    record = async_to_sync(store.get_session)(session.id)
    stale = Commit(events=[], checkpoint=record.checkpoint, status=record.status, expected_version=record.version - 1)
    with pytest.raises(ConcurrencyError):
        async_to_sync(store.commit)(session.id, stale)
    assert WorkflowSession.objects.get(pk=session.id).version == record.version


# -- H23 ----------------------------------------------------------------------------------------


@pytest.fixture
def locked_review(postgres, start_review_tx):
    return start_review_tx()


@pytest.fixture
def start_review_tx(demo_tx, client):
    from tests.conftest import post_webhook

    def start():
        response = post_webhook(client, {"complaint": "battery"})
        assert response.status_code == 202
        session = WorkflowSession.objects.get(pk=response.json()["session_id"])
        return session, Item.objects.get(session=session, status="pending")

    return start


def _raw_connection() -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"],
        dbname=settings["NAME"],
    )


@pytest.mark.parametrize("table", ["inbox_item", "workflow_sessions_workflowsession"])
def test_h23_a_decision_on_a_locked_row_is_a_clean_409_busy_in_bounded_time(locked_review, client, table):
    session, interrupt = locked_review
    manager = (
        __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model().objects.get(username="manager")
    )
    client.force_login(manager)
    key = interrupt.pk if table == "inbox_item" else session.pk
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        (lock_timeout,) = cursor.fetchone()
    holder = _raw_connection()
    try:
        holder.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR UPDATE", (key,))
        started = time.monotonic()
        response = client.post(f"/inbox/items/{interrupt.pk}/decide/", {"action": "approve"})
        waited = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    print(f"\nlock_timeout {lock_timeout}: refused after {waited:.2f} s")
    assert response.status_code == 409
    assert response["Retry-After"] == "1"
    assert b"busy" in response.content and b"Traceback" not in response.content
    assert waited < 10
    assert not connection.in_atomic_block and not connection.needs_rollback  # no transaction left open
    with connection.cursor() as cursor:
        cursor.execute("SELECT state FROM pg_stat_activity WHERE pid = pg_backend_pid()")
        assert cursor.fetchone()[0] == "active"
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert not Answer.objects.filter(session=session).exists()
    # The lock is gone: the same decision goes through.
    response = client.post(f"/inbox/items/{interrupt.pk}/decide/", {"action": "approve"})
    assert response.status_code == 302
    interrupt.refresh_from_db()
    assert interrupt.status == "resolved"
