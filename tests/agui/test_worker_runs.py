"""AG-UI runs go through the ``run_session`` task: the request only queues the run and streams
what the worker reports over the channel layer (agui/progress.py), catching up from the store.

These tests use django-tasks-db's backend and a real worker thread (``console.worker.ThreadWorker``),
as ``serve`` does, so the run happens on a thread of its own while the request streams; a model
held at a gate keeps a run going while a test looks at the stream.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.tasks.signals import task_finished

from engine import ScriptedModel
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)

GATE_LIMIT = 30.0
"""Seconds after which a gate or a wait gives up, so that a broken run fails the test instead of hanging it."""


@pytest.fixture
def worker(settings):
    """A django-tasks-db worker thread running the queued tasks, as in ``serve``."""
    from reviewconsole.console.worker import ThreadWorker

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    thread = ThreadWorker(count=1, interval=0.05)
    thread.start()
    yield thread
    thread.stop()


@pytest.fixture
def runs_finished():
    """``await runs_finished(n)``: returns once ``n`` ``run_session`` tasks were recorded as
    finished (``task_finished``, sent after the row's status is saved). A stream ends at its run's
    ``run_end`` message, which the task publishes before it returns, so a test that reads the
    task rows once its streams ended waits for this first."""
    from reviewconsole.workflow_sessions.tasks import run_session

    done = threading.Semaphore(0)

    def record(sender, task_result, **kwargs):
        if task_result.task.module_path == run_session.module_path:
            done.release()

    task_finished.connect(record, weak=False)

    async def wait(count):
        for _ in range(count):
            assert await asyncio.to_thread(done.acquire, True, GATE_LIMIT), "a run_session task never finished"

    yield wait
    task_finished.disconnect(record)


class GatedModel(ScriptedModel):
    """A streamed ScriptedModel whose first reply streams its deltas, then waits for ``gate``
    before its complete response (so the run is still going while its deltas are out)."""

    def __init__(self, responses):
        super().__init__(responses, stream=True)
        self.gate = threading.Event()

    async def generate(self, request):
        first = self.calls == 0
        async for response in super().generate(request):
            if first and not response.partial:
                assert await asyncio.to_thread(self.gate.wait, GATE_LIMIT), "the test never opened the gate"
            yield response


@pytest.fixture
def gated(monkeypatch):
    """``gated(workflow, [responses])``: that workflow's agents answer from a :class:`GatedModel`."""
    from reviewconsole.workflow_sessions.runners import runner_for

    def use(workflow, responses):
        model = GatedModel(responses)
        monkeypatch.setattr(runner_for(workflow), "model", model)
        return model

    return use


class Stream:
    """One AG-UI response read as it arrives: ``events`` so far, ``until(type)``, ``rest()``."""

    def __init__(self, response):
        self.response = response
        self.chunks = aiter(response.streaming_content)
        self.events = []

    @classmethod
    async def open(cls, token, workflow, data):
        from django.test import AsyncClient

        response = await AsyncClient().post(
            f"/agui/{workflow}/", json.dumps(data), content_type="application/json", headers=_auth(token)
        )
        assert response.status_code == 200
        return cls(response)

    async def until(self, kind):
        """Read until an event of ``kind`` arrived; returns it."""
        while not (found := [e for e in self.events if e["type"] == kind]):
            self._add(await anext(self.chunks))
        return found[0]

    async def rest(self):
        async for chunk in self.chunks:
            self._add(chunk)
        return self.events

    def _add(self, chunk):
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        self.events += [json.loads(f.removeprefix("data: ")) for f in text.split("\n\n") if f]

    @property
    def session_id(self):
        return next(e["value"]["sessionId"] for e in self.events if e["type"] == "CUSTOM" and e["name"] == "status")


def _auth(token):
    return {"Authorization": f"Bearer {token}"}


def _run_sessions():
    """Statuses of the ``run_session`` tasks django-tasks-db ran, oldest first."""
    from django_tasks_db.models import DBTaskResult

    from reviewconsole.workflow_sessions.tasks import run_session

    rows = DBTaskResult.objects.filter(task_path=run_session.module_path).order_by("enqueued_at")
    return list(rows.values_list("status", flat=True))


def _lease_held(session_id):
    from reviewconsole.agui.services import lease_free

    return not lease_free(session_id)


def _texts(events):
    buffers = {}
    for e in events:
        if e["type"] == "TEXT_MESSAGE_CONTENT":
            buffers[e["messageId"]] = buffers.get(e["messageId"], "") + e["delta"]
    return list(buffers.values())


class _Spy:
    """Records the threads ``Runner.run_pending`` runs on."""

    def __init__(self, monkeypatch):
        from engine import Runner

        self.threads = []
        original = Runner.run_pending

        async def run_pending(runner, session_id, **kwargs):
            self.threads.append(threading.current_thread())
            return await original(runner, session_id, **kwargs)

        monkeypatch.setattr(Runner, "run_pending", run_pending)


async def test_the_run_happens_in_the_task_and_never_in_the_request(agui, scripted, worker, runs_finished, monkeypatch):
    spy = _Spy(monkeypatch)
    scripted("email-review", ["Draft one, about the battery.", "Draft two, shorter."])

    first = well_formed(await agui("email-review", body("t-task", "My battery drains")))
    [interrupt] = first.interrupts
    second = well_formed(await agui("email-review", body("t-task", resume=resume(interrupt, "shorter"))))

    assert "".join(first.text_of_messages()) == "Draft one, about the battery."
    assert len(first.of("TEXT_MESSAGE_CONTENT")) == 5  # the deltas, word by word, through the channel layer
    assert "Draft two" in "".join(second.text_of_messages()) and second.interrupts
    await runs_finished(2)
    assert await sync_to_async(_run_sessions)() == ["SUCCESSFUL", "SUCCESSFUL"]  # one task per request
    assert len(spy.threads) == 2  # each task ran the session once, on the worker's side
    assert threading.current_thread() not in spy.threads  # the request's loop never ran it


async def test_text_deltas_stream_while_the_run_is_still_going(token, gated, worker):
    model = gated("email-review", ["Draft one, about the battery."])
    stream = await Stream.open(token, "email-review", body("t-live", "My battery drains"))

    await stream.until("TEXT_MESSAGE_CONTENT")
    while len([e for e in stream.events if e["type"] == "TEXT_MESSAGE_CONTENT"]) < 5:
        stream._add(await anext(stream.chunks))

    assert await sync_to_async(_lease_held)(stream.session_id)  # the worker's run holds the session
    assert "RUN_FINISHED" not in [e["type"] for e in stream.events]
    assert [e["delta"] for e in stream.events if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        "Draft ",
        "one, ",
        "about ",
        "the ",
        "battery.",
    ]
    model.gate.set()
    events = await stream.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"]["type"] == "interrupt"
    assert _texts(events) == ["Draft one, about the battery."]
    assert [e["type"] for e in events].count("TEXT_MESSAGE_END") == 1


async def test_a_second_request_waits_for_the_running_one_then_runs(
    agui, token, gated, worker, runs_finished, monkeypatch
):
    from reviewconsole.agui import services

    waiting = threading.Event()
    lease_free = services.lease_free

    def spy(session_id):
        free = lease_free(session_id)
        if not free:
            waiting.set()
        return free

    monkeypatch.setattr(services, "lease_free", spy)
    model = gated("support-handoff", ["Hello! How can I help?", "Refunds take three days."])
    first = await Stream.open(token, "support-handoff", body("t-two-at-once", "Hi"))
    await first.until("TEXT_MESSAGE_CONTENT")

    second = asyncio.ensure_future(agui("support-handoff", body("t-two-at-once", "How long do refunds take?")))
    assert await asyncio.to_thread(waiting.wait, GATE_LIMIT)  # the second request found the session busy
    assert not second.done()
    model.gate.set()
    first_events = await first.rest()
    later = well_formed(await second)

    assert first_events[-1]["type"] == "RUN_FINISHED"
    assert later.last["type"] == "RUN_FINISHED" and later.of("CUSTOM", "status")[-1]["value"]["awaitingMessage"]
    assert later.text_of_messages()[-1] == "Refunds take three days."
    await runs_finished(2)
    assert await sync_to_async(_run_sessions)() == ["SUCCESSFUL", "SUCCESSFUL"]


async def test_a_second_request_gets_session_busy_when_the_run_outlasts_the_wait(agui, token, gated, worker, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "AGUI_LEASE_WAIT": 0.2}  # the bounded wait under test
    model = gated("support-handoff", ["Hello! How can I help?"])
    first = await Stream.open(token, "support-handoff", body("t-busy", "Hi"))
    await first.until("TEXT_MESSAGE_CONTENT")

    second = well_formed(await agui("support-handoff", body("t-busy", "Anyone there?")))

    assert second.last["type"] == "RUN_ERROR" and second.last["code"] == "session_busy"
    model.gate.set()
    events = await first.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and _texts(events) == ["Hello! How can I help?"]


async def test_a_client_that_disconnects_leaves_the_run_going_and_the_next_request_catches_up(
    agui, token, gated, worker
):
    from django.tasks.signals import task_finished

    from reviewconsole.workflow_sessions.models import WorkflowSession

    finished = threading.Event()

    def on_finished(sender, task_result, **kwargs):
        if task_result.task.name == "run_session":
            finished.set()

    task_finished.connect(on_finished, weak=False)
    try:
        model = gated("support-handoff", ["Hello! How can I help?", "Refunds take three days."])
        stream = await Stream.open(token, "support-handoff", body("t-gone", "Hi", message_id=f"m-{uuid.uuid4().hex}"))
        await stream.until("TEXT_MESSAGE_CONTENT")
        await stream.chunks.aclose()  # the client goes away mid-stream
        model.gate.set()
        assert await asyncio.to_thread(finished.wait, GATE_LIMIT)  # the worker finished the run anyway
    finally:
        task_finished.disconnect(on_finished)
    session = await WorkflowSession.objects.aget(pk=stream.session_id)
    assert session.status == "waiting"

    later = well_formed(await agui("support-handoff", body("t-gone", "How long do refunds take?")))

    assert later.text_of_messages() == ["Hello! How can I help?", "Refunds take three days."]
    snapshot = later.types.index("STATE_SNAPSHOT")
    caught_up = [e for e in later.events[:snapshot] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert [e["delta"] for e in caught_up] == ["Hello! How can I help?"]  # the stored reply, before the new run
    ids = [e["messageId"] for e in later.of("TEXT_MESSAGE_START")]
    assert len(ids) == len(set(ids)) == 2  # each message once
