"""``engine_calls``: a door's engine call runs on the caller's thread, in its transaction, with no
event loop; a run (and any coroutine on a loop) still reaches the database through a thread."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import async_to_sync
from django.db import transaction

import engine
from reviewconsole.workflow_sessions.engine_calls import call, in_db
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.services import interrupt_answer_sync, session_cancel_sync, session_start
from reviewconsole.workflow_sessions.store import OrmStore


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def spied(monkeypatch):
    """Where ``Runner.start`` ran and where the store's commit ran: (thread, loop running there?)."""
    seen: dict[str, tuple[threading.Thread, bool]] = {}
    start, commit = engine.Runner.start, OrmStore._commit

    async def spy_start(self, *args, **kwargs):
        seen["start"] = (threading.current_thread(), _loop_running())
        return await start(self, *args, **kwargs)

    def spy_commit(self, *args, **kwargs):
        seen["commit"] = (threading.current_thread(), _loop_running())
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(engine.Runner, "start", spy_start)
    monkeypatch.setattr(OrmStore, "_commit", spy_commit)
    return seen


def test_a_start_runs_the_engine_on_the_callers_thread_with_no_event_loop(demo, spied):
    session = session_start(workflow="email-review", data={"complaint": "Battery"}, user_id="u", enqueue=False)

    here = threading.current_thread()
    assert spied["start"] == (here, False)  # before: on async_to_sync's loop, on another thread
    assert spied["commit"] == (here, False)
    assert session.status == "running" and session.title == "Battery"


def test_a_start_is_part_of_the_callers_transaction(demo):
    class Undo(Exception):
        pass

    with pytest.raises(Undo), transaction.atomic():
        session = session_start(workflow="email-review", data={"complaint": "Battery"}, user_id="u", enqueue=False)
        assert WorkflowSession.objects.filter(pk=session.pk).exists()
        raise Undo

    assert not WorkflowSession.objects.filter(pk=session.pk).exists()


def test_answers_and_a_cancel_run_on_the_callers_thread(start_review, on_commit, spied):
    session, item = start_review()
    spied.clear()
    with on_commit():
        [answered] = interrupt_answer_sync(session.pk, {item.interrupt_id: {"result": "approve"}}, decided_by="t")
    assert answered.id == item.interrupt_id

    other, _ = start_review()
    spied.clear()
    record = session_cancel_sync(other.pk, reason="test")
    assert record.status == "cancelled"
    assert spied["commit"] == (threading.current_thread(), False)


def test_a_refusal_is_raised_as_the_engine_raised_it(demo):
    with pytest.raises(engine.WorkflowDataError):
        session_start(workflow="email-review", data={"no": "complaint"}, user_id="u", enqueue=False)


def test_a_call_that_waits_on_a_loop_is_stopped_with_a_clear_error():
    finished = []

    async def needs_a_loop():
        try:
            await asyncio.sleep(0)  # yields nothing to wait on: fine without a loop
            await asyncio.sleep(0.01)  # a timer: only a loop gives one
        finally:
            finished.append(True)

    with pytest.raises(RuntimeError, match="event loop"):
        call(needs_a_loop())
    assert finished == [True]  # closed: its cleanup ran


def test_a_call_returns_what_the_coroutine_returns_and_raises_what_it_raises():
    async def give(value):
        await asyncio.sleep(0)
        return value

    async def fail():
        raise KeyError("x")

    assert call(give(42)) == 42
    with pytest.raises(KeyError):
        call(fail())


def test_in_db_runs_directly_only_under_call():
    threads = []

    def where():
        threads.append((threading.current_thread(), _loop_running()))
        return len(threads)

    async def through_db():
        return await in_db(where)()

    assert call(through_db()) == 1
    assert threads[-1] == (threading.current_thread(), False)

    assert async_to_sync(through_db)() == 2  # on a loop: the sync function runs off the loop's thread
    assert threads[-1] == (threading.current_thread(), False)

    async def nested():  # a loop started inside a direct call inherits its context: still off the loop
        return await in_db(lambda: async_to_sync(through_db)())()

    assert call(nested()) == 3
    assert threads[-1][1] is False


@pytest.mark.django_db(transaction=True)
def test_a_call_from_a_thread_running_a_loop_is_refused_before_it_runs(demo_tx):
    store = OrmStore()

    async def inside_a_loop():
        with pytest.raises(RuntimeError, match="running an event loop"):
            call(store.create_session(app_name="email-review", user_id="u", session_id="f" * 32))

    asyncio.run(inside_a_loop())
    assert not WorkflowSession.objects.filter(pk="f" * 32).exists()  # before: refused after its write


def test_a_start_writes_its_session_row_once_and_reads_it_once(demo):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        data = {"complaint": "Battery"}
        session = session_start(workflow="email-review", data=data, user_id="u", correlation_key="k-7", enqueue=False)

    on_row = [q["sql"].split()[0] for q in captured.captured_queries if "workflow_sessions_workflowsession" in q["sql"]]
    # Before: the title and key were a second UPDATE, and the start read the row it had just inserted.
    assert on_row == ["INSERT", "UPDATE", "SELECT"], on_row  # created; the start's commit; the row returned
    assert (session.title, session.correlation_key, session.status) == ("Battery", "k-7", "running")
