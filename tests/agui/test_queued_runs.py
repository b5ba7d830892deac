"""A run the AG-UI door queues is written with what it is for, in one transaction (``enqueue_run``
with the database task backend, as ``serve`` runs it): the answers that resume a session or the
thread that starts one commit with their run's task, and a refused answer or a first request
that loses its thread leaves no task behind (the worker would have run it for nothing)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body
from tests.agui.test_runs import well_formed
from tests.outbound.test_retries import DB_TASKS, _reset_task_backends

pytestmark = pytest.mark.django_db(transaction=True)

RUN_SESSION = "reviewconsole.workflow_sessions.tasks.run_session"


def run_tasks() -> list[tuple[str, list]]:
    """(status, args) of every ``run_session`` task stored."""
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(task_path=RUN_SESSION).order_by("enqueued_at")
    return [(row.status, row.args_kwargs["args"]) for row in rows]


@pytest.fixture
def db_tasks(settings):
    """From here on, tasks are stored for a worker (none runs in these tests)."""

    def use():
        settings.TASKS = DB_TASKS
        _reset_task_backends()

    yield use
    _reset_task_backends()


async def test_answers_queue_their_run_in_their_transaction_and_refused_ones_queue_nothing(agui, scripted, db_tasks):
    from engine import UnknownInterruptError
    from reviewconsole.agui.answers import answers_store

    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-queued", "My battery drains")))  # runs at once
    [interrupt] = first.interrupts
    session_id = first.of("CUSTOM", "status")[0]["value"]["sessionId"]
    db_tasks()
    store = sync_to_async(answers_store)

    with pytest.raises(UnknownInterruptError):  # refused by the engine, inside the answers' transaction
        await store(session_id, {"no-such-interrupt": "approve"}, decided_by="agui:agui-tests", queue_run={"n": 1})
    assert await sync_to_async(run_tasks)() == []

    await store(session_id, {interrupt["id"]: "approve"}, decided_by="agui:agui-tests", queue_run={"n": 2})
    assert await sync_to_async(run_tasks)() == [("READY", [session_id, {"n": 2}])]


def test_a_first_request_that_loses_its_thread_queues_no_run(token, db_tasks):
    from reviewconsole.agui import services
    from reviewconsole.agui.errors import Refusal
    from reviewconsole.api.models import ApiClient
    from reviewconsole.workflow_sessions.models import WorkflowSession

    db_tasks()
    client = ApiClient.objects.get(name="agui-tests")
    start = {"client": client, "workflow": "email-review", "thread_id": "t-lost", "queue_run": {"n": 1}}
    thread, _, _ = services.thread_start(data="first", message_id="m-1", **start)
    with pytest.raises(Refusal) as refused:
        services.thread_start(data="second", message_id="m-2", **start)
    assert refused.value.code == "session_busy"
    assert run_tasks() == [("READY", [thread.session_id, {"n": 1}])]
    assert list(WorkflowSession.objects.values_list("id", flat=True)) == [thread.session_id]
