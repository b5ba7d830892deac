"""Threads and sessions of the AG-UI door: a first request that loses the race for its thread
leaves nothing behind."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body

pytestmark = pytest.mark.django_db(transaction=True)


def sessions():
    """(all sessions, sessions no thread points to)."""
    from reviewconsole.workflow_sessions.models import WorkflowSession

    rows = WorkflowSession.objects.all()
    return rows.count(), rows.filter(agui_thread__isnull=True).count()


async def test_a_first_request_that_loses_its_thread_leaves_no_session(agui, scripted, monkeypatch):
    from reviewconsole.agui import services

    scripted("email-review", ["Draft one."])
    winner = await agui("email-review", body("t-race", "first"))
    assert winner.last["outcome"]["type"] == "interrupt"
    assert await sync_to_async(sessions)() == (1, 0)
    # a request that read "no such thread" before the winner's row was committed
    monkeypatch.setattr(services, "thread_get", lambda **_: None)

    loser = await agui("email-review", body("t-race", "second"))

    assert loser.last["type"] == "RUN_ERROR" and loser.last["code"] == "session_busy"
    assert await sync_to_async(sessions)() == (1, 0)


async def test_concurrent_first_requests_of_one_thread_make_one_session(agui, scripted):
    scripted("email-review", ["Draft one."] * 6)

    runs = await asyncio.gather(*(agui("email-review", body("t-six", f"first {n}")) for n in range(6)))

    assert sum(run.last["type"] == "RUN_FINISHED" for run in runs) >= 1
    assert all(run.last.get("code") in (None, "session_busy", "interrupts_pending") for run in runs)
    assert await sync_to_async(sessions)() == (1, 0)


async def test_the_outcome_leaves_out_events_the_stream_sent_and_notes_every_one_as_sent(agui, scripted):
    from reviewconsole.agui import services
    from reviewconsole.agui.models import AguiThread

    scripted("email-review", ["Draft one."])
    run = await agui("email-review", body("t-known", "first"))
    assert run.last["outcome"]["type"] == "interrupt"

    def outcome_after_rewinding_the_thread():
        thread = AguiThread.objects.get(thread_id="t-known")
        events, last = services.stored_events(thread.session_id, 0)
        assert len(events) >= 2 and last == thread.last_seq > 0
        thread.last_seq = 0
        outcome = services.run_outcome(thread, {events[0].id})
        return events, last, outcome, AguiThread.objects.get(pk=thread.pk).last_seq

    events, last, outcome, noted = await sync_to_async(outcome_after_rewinding_the_thread)()
    assert [event.id for event in outcome.events] == [event.id for event in events[1:]]
    assert noted == last
    assert [record.id for record in outcome.pending] == [i["id"] for i in run.last["outcome"]["interrupts"]]


@pytest.fixture
def db_tasks(settings):
    """django-tasks-db's backend, as ``serve`` runs it, with no worker: a queued run stays queued."""
    from tests.outbound.test_retries import DB_TASKS, _reset_task_backends

    settings.TASKS = DB_TASKS
    _reset_task_backends()
    yield
    _reset_task_backends()


def test_a_new_thread_is_started_under_its_given_id_read_and_queued_in_one_call(token, db_tasks):
    from django_tasks_db.models import DBTaskResult

    from reviewconsole.agui import services
    from reviewconsole.api.models import ApiClient
    from reviewconsole.workflow_sessions.services import new_session_id, runs_wait_in_queue

    assert runs_wait_in_queue()  # the database backend only stores the task
    session_id = new_session_id()
    metadata = {"agui": {"thread_id": "t-one-call"}}
    thread, events, state = services.thread_start(
        client=ApiClient.objects.get(name="agui-tests"),
        workflow="email-review",
        thread_id="t-one-call",
        data="My battery drains fast",
        message_id="m-1",
        session_id=session_id,
        queue_run=metadata,
    )
    assert thread.session_id == session_id and len(session_id) == 32 and int(session_id, 16) >= 0
    assert [event.id for event in events] == [event.id for event in services.stored_events(session_id, 0)[0]]
    assert isinstance(state, dict)
    [task] = DBTaskResult.objects.filter(task_path__endswith="run_session")
    assert (task.status, task.args_kwargs["args"]) == ("READY", [session_id, metadata])


def test_with_tasks_run_as_they_are_queued_a_door_queues_runs_off_its_thread():
    from reviewconsole.workflow_sessions.services import runs_wait_in_queue

    assert not runs_wait_in_queue()  # the test settings' ImmediateBackend would run it in the call


async def test_a_client_that_leaves_right_after_run_started_loses_nothing(token, scripted):
    from ag_ui.core import RunAgentInput

    from reviewconsole.agui import detached, runs
    from reviewconsole.agui.models import AguiThread
    from reviewconsole.api.models import ApiClient
    from reviewconsole.workflow_sessions.services import pending_interrupts
    from reviewconsole.workflows import get

    scripted("email-review", ["Draft one."])
    client = await ApiClient.objects.aget(name="agui-tests")
    frames = runs.stream_run(client=client, spec=get("email-review"), run=RunAgentInput(**body("t-left", "Broken")))
    assert '"RUN_STARTED"' in await anext(frames)
    await frames.aclose()  # the client is gone before anything was stored

    await asyncio.gather(*detached._tasks, return_exceptions=True)  # its message stored, its run queued, then stopped
    await asyncio.gather(*runs._enqueues)  # the run (the test backend runs it as it is queued)
    thread = await AguiThread.objects.aget(thread_id="t-left")
    assert [record.kind for record in await pending_interrupts(thread.session_id)] != []


async def test_a_request_while_serve_stops_is_refused_as_stopping_and_stores_nothing(agui, scripted, monkeypatch):
    """Refused before its stream starts (``in_flight.InFlightMiddleware``); a stream already
    running when serve begins to stop has its next call refused as ``unavailable`` instead."""
    from reviewconsole import in_flight

    scripted("email-review", ["Draft one."])
    monkeypatch.setattr(in_flight, "_stopping", True)  # as after SIGTERM: in_flight.drain()

    refused = await agui("email-review", body("t-stopping", "first"))

    assert refused.status == 503 and json.loads(refused.text)["error"]["code"] == "stopping"
    assert await sync_to_async(sessions)() == (0, 0)
    assert in_flight.in_flight() == 0
