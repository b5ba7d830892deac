"""Resume from checkpoints, never by replaying history; crash recovery; invocations kept apart."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    AlreadyDecidedError,
    ConcurrencyError,
    Context,
    Event,
    FunctionCall,
    InMemoryStore,
    LlmAgent,
    RequestInput,
    Runner,
    ScriptedModel,
    SessionBusyError,
    SessionClosedError,
    SessionStatus,
    VersionMismatchError,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, start


class CountingStore(InMemoryStore):
    """Counts reads of the event history and can skip releasing leases (a crashed worker)."""

    def __init__(self) -> None:
        super().__init__()
        self.history_reads = 0
        self.crashed = False

    async def list_events(self, session_id, *, path=None, after=0):
        self.history_reads += 1
        return await super().list_events(session_id, path=path, after=after)

    async def release_lease(self, session_id, owner):
        if not self.crashed:
            await super().release_lease(session_id, owner)


def review_loop(counts: Counts) -> Workflow:
    """START → intake → draft (LLM) → review (asks, reruns) → revise loops back / done ends."""

    def intake(node_input: str):
        counts.hit("intake")
        return Event(state={"topic": node_input, "feedback": ""})

    draft = LlmAgent("draft", instruction="Write about {topic}. {feedback?}", output_key="draft")

    @node(rerun_on_resume=True)
    def review(ctx: Context, draft: str):
        counts.hit("review")
        answer = ctx.resume_inputs.get("review")
        if answer is None:
            yield RequestInput(interrupt_id="review", message=draft)
            return
        if answer == "ok":
            yield Event(route="done")
        else:
            yield Event(state={"feedback": answer}, route="revise")

    def publish(draft: str):
        counts.hit("publish")
        return draft

    return Workflow("loop", edges=[(START, intake, draft, review), (review, {"revise": draft, "done": publish})])


def drafting_model() -> ScriptedModel:
    model = ScriptedModel()
    model.responses = _Endless()
    return model


class _Endless(list):
    """An endless script: draft number n."""

    def __len__(self):
        return 10**9

    def __getitem__(self, index):
        return f"draft {index + 1}"


async def loop_session(k: int, store=None):
    counts = Counts()
    model = drafting_model()
    runner = Runner(review_loop(counts), store if store is not None else CountingStore(), model=model)
    session = await runner.create_session()
    await runner.run(session.id, "tea")
    for _ in range(k - 1):
        await runner.resume(session.id, {"review": "again"})
    return runner, session.id, counts, model


# -- no replay ------------------------------------------------------------------------------


async def test_a_resume_runs_only_what_comes_after_the_interrupt():
    runner, sid, counts, model = await loop_session(3)
    assert counts == {"intake": 1, "review": 5}  # review: asked 3 times, reran twice
    assert model.calls == 3
    result = await runner.resume(sid, {"review": "ok"})
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"intake": 1, "review": 6, "publish": 1}
    assert model.calls == 3
    assert {e.node_info.path for e in result.events if e.node_info.path} == {"loop@1/review@3", "loop@1/publish@1"}


async def test_resume_work_does_not_grow_with_history():
    sizes = {}
    for k in (1, 10, 60):
        runner, sid, counts, model = await loop_session(k)
        store = runner.store
        checkpoint = (await store.get_session(sid)).checkpoint
        sizes[k] = len(json.dumps(checkpoint))
        reads_before, review_before, calls_before = store.history_reads, counts["review"], model.calls
        result = await runner.resume(sid, {"review": "again"})
        assert result.status == SessionStatus.WAITING
        assert store.history_reads == reads_before  # the resume never reads the event history
        assert counts["review"] - review_before == 2  # the answered run, then the new one
        assert model.calls - calls_before == 1
        assert len(await store.list_events(sid)) > 4 * k
    # the checkpoint holds run counters, not history: a few bytes for longer numbers at most
    assert sizes[60] - sizes[1] <= 8


async def test_the_checkpoint_is_kept_at_each_pause_and_can_be_read_back():
    runner, sid, _, _ = await loop_session(1)
    record = await runner.store.get_session(sid)
    assert record.checkpoint["format"] == 1
    assert record.checkpoint["invocation_id"] == record.invocation_id
    assert record.checkpoint_id
    kept = await runner.store.get_checkpoint(sid, record.checkpoint_id)
    assert kept == record.checkpoint
    loop = kept["root"]["child"]
    assert loop["nodes"]["review"] == {
        "status": "waiting",
        "run": "1",
        "input": "draft 1",
        "interrupts": {"review": "review"},
    }


# -- crash recovery -------------------------------------------------------------------------


async def test_a_crashed_run_is_picked_up_from_its_last_checkpoint():
    counts = Counts()
    gate = asyncio.Event()

    def first():
        counts.hit("first")
        return "one"

    async def second(node_input):
        counts.hit("second")
        if counts["second"] == 1:
            await gate.wait()  # the worker dies here
        return f"{node_input} two"

    def third(node_input):
        counts.hit("third")
        return f"{node_input} three"

    store = CountingStore()
    wf = Workflow("wf", edges=[(START, first, second, third)])
    crashed = Runner(wf, store, lease_ttl=0.05)
    session = await crashed.create_session()
    await crashed.start(session.id, "go")
    task = asyncio.ensure_future(crashed.run_pending(session.id))
    while counts["second"] == 0:
        await asyncio.sleep(0)
    store.crashed = True
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    store.crashed = False
    assert (await store.get_session(session.id)).status == SessionStatus.RUNNING

    survivor = Runner(wf, store, lease_ttl=0.05)
    busy = await survivor.run_pending(session.id)
    assert busy.status == SessionStatus.RUNNING  # the dead run's lease has not expired yet
    await asyncio.sleep(0.06)
    result = await survivor.run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "one two three"
    assert counts == {"first": 1, "second": 2, "third": 1}


# -- versions, invocations, cancellation ----------------------------------------------------


async def test_a_session_resumes_only_under_the_version_it_paused_under():
    def ask():
        return RequestInput(interrupt_id="q")

    store = InMemoryStore()
    runner, sid, _ = await start(Workflow("wf", edges=[(START, ask)], version="1"), store=store)
    newer = Runner(Workflow("wf", edges=[(START, ask)], version="2"), store)
    await newer.submit(sid, {"q": "a"})
    with pytest.raises(VersionMismatchError) as info:
        await newer.run_pending(sid)
    assert info.value.details == {"session_version": "1", "runner_version": "2"}
    assert (await store.get_session(sid)).status == SessionStatus.WAITING
    result = await runner.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED


async def test_a_resume_never_mixes_events_of_another_invocation():
    seen: list[dict] = []

    @node(rerun_on_resume=True)
    def review(ctx: Context, node_input):
        seen.append(dict(ctx.resume_inputs))
        answer = ctx.resume_inputs.get("review")
        if answer is None:
            yield RequestInput(interrupt_id="review", message=f"review {node_input}")
            return
        yield f"{node_input}: {answer}"

    runner, sid, _ = await start(Workflow("wf", edges=[(START, review)]), "one")
    done = await runner.resume(sid, {"review": "approved"})
    assert done.output == "one: approved"
    second = await runner.run(sid, "two")
    assert second.status == SessionStatus.WAITING
    result = await runner.resume(sid, {"review": "rejected"})
    assert result.output == "two: rejected"
    assert seen == [{}, {"review": "approved"}, {}, {"review": "rejected"}]
    events = await runner.store.list_events(sid)
    invocations = [e.invocation_id for e in events]
    first_id, second_id = invocations[0], invocations[-1]
    assert first_id != second_id
    assert invocations == [first_id] * invocations.count(first_id) + [second_id] * invocations.count(second_id)
    assert {e.invocation_id for e in result.events} == {second_id}
    assert len(calls(events, "adk_request_input")) == 2


async def test_cancel_closes_pending_interrupts_and_later_answers_are_refused():
    def ask():
        return RequestInput(interrupt_id="q")

    runner, sid, _ = await start(Workflow("wf", edges=[(START, ask)]))
    record = await runner.cancel(sid, reason="no longer needed")
    assert record.status == SessionStatus.CANCELLED
    assert await runner.store.pending_interrupts(sid) == []
    with pytest.raises(AlreadyDecidedError):
        await runner.submit(sid, {"q": "late"})
    with pytest.raises(SessionClosedError):
        await runner.cancel(sid)


async def test_a_cancel_while_an_answer_waits_for_its_run_is_refused_and_the_answer_stands():
    def ask():
        return RequestInput(interrupt_id="q")

    runner, sid, _ = await start(Workflow("wf", edges=[(START, ask)]))
    await runner.submit(sid, {"q": "first"})  # stored; its run has not applied it yet
    with pytest.raises(SessionBusyError):  # before: cancelled, and the stored decision was dropped
        await runner.cancel(sid)
    assert (await runner.store.get_session(sid)).status == SessionStatus.WAITING
    assert [a.value for a in await runner.store.take_answers(sid)] == ["first"]
    result = await runner.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED


async def test_a_cancelled_session_takes_no_new_message():
    def ask():
        return RequestInput(interrupt_id="q")

    runner, sid, _ = await start(Workflow("wf", edges=[(START, ask)]))
    cancelled = await runner.cancel(sid)
    events = len(await runner.store.list_events(sid))
    with pytest.raises(SessionClosedError):
        await runner.start(sid, "once more")
    after = await runner.store.get_session(sid)
    assert (after.status, after.version) == (SessionStatus.CANCELLED, cancelled.version)
    assert len(await runner.store.list_events(sid)) == events


class ReadCountingStore(InMemoryStore):
    """Counts reads of a session's record."""

    def __init__(self) -> None:
        super().__init__()
        self.record_reads = 0

    async def get_session(self, session_id):
        self.record_reads += 1
        return await super().get_session(session_id)


async def test_a_start_given_the_record_it_just_created_does_not_read_it_again():
    def ask():
        return RequestInput(interrupt_id="q")

    store = ReadCountingStore()
    runner = Runner(Workflow("wf", edges=[(START, ask)]), store)
    created = await runner.create_session()
    stored = await runner.start(created.id, "go", record=created)
    assert store.record_reads == 0
    assert (stored.status, stored.version) == (SessionStatus.RUNNING, created.version + 1)
    result = await runner.run_pending(created.id)
    assert [r.id for r in result.interrupts] == ["q"]


async def test_a_start_given_an_out_of_date_record_is_refused_and_stores_nothing():
    def done():
        return "done"

    runner, sid, first = await start(Workflow("wf", edges=[(START, done)]))
    stale = first.session  # completed, before the next invocation
    await runner.run(sid, "again")
    moved_on = await runner.store.get_session(sid)
    events = len(await runner.store.list_events(sid))
    with pytest.raises(ConcurrencyError):
        await runner.start(sid, "once more", record=stale)
    after = await runner.store.get_session(sid)
    assert (after.version, after.invocation_id) == (moved_on.version, moved_on.invocation_id)
    assert len(await runner.store.list_events(sid)) == events


async def test_a_start_given_another_sessions_record_is_refused():
    def done():
        return "done"

    runner = Runner(Workflow("wf", edges=[(START, done)]), InMemoryStore())
    one, other = await runner.create_session(), await runner.create_session()
    with pytest.raises(ValueError, match="not"):
        await runner.start(one.id, "go", record=other)
    assert (await runner.store.get_session(one.id)).version == one.version


class Identity(BaseModel):
    name: str
    phone: str


async def _task_agent_waiting_for_a_message() -> tuple[Runner, str, Any]:
    """A session whose task agent waits for the user's next message; its record as the run left it."""
    model = ScriptedModel(
        ["What is your phone number?", FunctionCall(name="finish_task", args={"name": "Ada", "phone": "555"})]
    )
    intake = LlmAgent("intake", model=model, mode="task", output_schema=Identity, instruction="Collect identity.")

    def greet(node_input: Identity):
        return f"Hello {node_input.name}"

    runner = Runner(Workflow("wf", edges=[(START, intake, greet)]), InMemoryStore())
    created = await runner.create_session()
    result = await runner.run(created.id, "I am Ada", record=created)
    assert (result.status, result.interrupts) == (SessionStatus.WAITING, [])
    return runner, created.id, result.session


async def test_an_out_of_date_record_of_a_task_agent_waiting_for_a_message_is_read_again():
    """Found by an attack: a message to a waiting task agent is stored without a version check,
    so a stale record saying "waiting" stored the message into a session that had ended. Such a
    record is read again: the start does what it does for the session as it is."""
    runner, sid, stale = await _task_agent_waiting_for_a_message()
    await runner.cancel(sid)
    events, answers = len(await runner.store.list_events(sid)), await runner.store.take_answers(sid)
    with pytest.raises(SessionClosedError):
        await runner.start(sid, "555", record=stale)
    assert len(await runner.store.list_events(sid)) == events
    assert await runner.store.take_answers(sid) == answers

    runner, sid, stale = await _task_agent_waiting_for_a_message()
    ended = (await runner.run(sid, "555")).session
    assert ended.status == SessionStatus.COMPLETED
    answers = await runner.store.take_answers(sid)
    started = await runner.start(sid, "Hello again", record=stale)  # a new invocation, as without the record
    assert (started.status, started.version) == (SessionStatus.RUNNING, ended.version + 1)
    assert started.invocation_id != ended.invocation_id
    assert await runner.store.take_answers(sid) == answers  # nothing handed to the ended agent
