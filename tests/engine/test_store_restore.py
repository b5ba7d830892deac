"""``restore_checkpoint`` on every store (factories in ``stores.py``), and ``Runner.restore_checkpoint``."""

from __future__ import annotations

import pytest

from engine import (
    START,
    Answer,
    CheckpointDecidedError,
    Event,
    NodeInfo,
    RequestInput,
    Runner,
    SessionClosedError,
    SessionStatus,
    UnknownCheckpointError,
    Workflow,
)
from tests.engine.stores import STORE_FACTORIES
from tests.engine.test_store_contract import commit, interrupt, new_session


@pytest.fixture(params=STORE_FACTORIES)
def store(request):
    return request.param(request)


def state_event(**state) -> Event:
    return Event(author="wf", invocation_id="inv", node_info=NodeInfo(path="wf@1/n@1"), state=state)


async def pause(store, record, *wires, events=()):
    return await store.commit(
        record.id,
        commit(
            record.version,
            events=list(events),
            status=SessionStatus.WAITING,
            pause=True,
            opened=[interrupt(record.id, w) for w in wires],
            checkpoint={"format": 1, "invocation_id": "inv", "root": {"at": len(wires)}},
        ),
    )


async def test_it_rewinds_state_checkpoint_and_interrupts_and_appends_a_rewind_event(store):
    session = await new_session(store)
    first = await pause(store, session, "a", events=[state_event(draft="one", feedback="")])
    await store.submit_answers(session.id, [Answer("a", "shorter")], Event(author="user"), decided_by="ada")
    taken = await store.take_answers(session.id)
    again = await store.commit(
        session.id, commit(first.version, events=[state_event(draft="two", extra=1)], consumed=[a.id for a in taken])
    )
    second = await pause(store, again, "b")
    assert second.checkpoint_id != first.checkpoint_id
    events_before = len(await store.list_events(session.id))

    restored = await store.restore_checkpoint(session.id, first.checkpoint_id, decided_by="ada")

    assert restored.status == SessionStatus.WAITING
    assert restored.checkpoint_id == first.checkpoint_id
    assert restored.checkpoint == {"format": 1, "invocation_id": "inv", "root": {"at": 1}}
    assert restored.state == {"draft": "one", "feedback": ""}
    assert restored.version == second.version + 1
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["a"]
    assert (await store.get_interrupt(session.id, "a")).status == "pending"
    assert (await store.get_interrupt(session.id, "b")).status == "cancelled"
    events = await store.list_events(session.id)
    assert len(events) == events_before + 1
    assert events[-1].custom_metadata == {"rewindToCheckpoint": first.checkpoint_id}
    assert events[-1].state_delta == {"draft": "one", "extra": None}
    assert (await store.get_session(session.id)).state == {"draft": "one", "feedback": ""}


async def test_unapplied_answers_are_dropped(store):
    session = await new_session(store)
    first = await pause(store, session, "a")
    await store.submit_answers(session.id, [Answer("a", "yes")], Event(author="user"), decided_by="ada")
    await store.restore_checkpoint(session.id, first.checkpoint_id, decided_by="ada")
    assert await store.take_answers(session.id) == []
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["a"]


async def test_an_unknown_checkpoint_or_another_sessions_changes_nothing(store):
    session = await new_session(store)
    other = await new_session(store)
    mine = await pause(store, session, "a")
    theirs = await pause(store, other, "x")
    assert await store.restore_checkpoint(session.id, "nope") is None
    assert await store.restore_checkpoint(session.id, theirs.checkpoint_id) is None
    after = await store.get_session(session.id)
    assert after.version == mine.version


def ask():
    return RequestInput(interrupt_id="go", message="Go?")


def check(node_input: str):
    return RequestInput(interrupt_id="sure", message=f"Sure about {node_input}?")


def echo(node_input: str) -> str:
    return f"answer: {node_input}"


def finish(node_input: str) -> str:
    return f"done: {node_input}"


def two_pauses(store=None) -> Runner:
    """go? then sure?, then the output: a session still open after its first answer."""
    return Runner(Workflow("twice", edges=[(START, ask, echo, check, finish)]), store)


async def test_the_runner_resumes_from_an_earlier_pause_with_another_answer():
    runner = two_pauses()
    session = await runner.create_session()
    paused = await runner.run(session.id, "x")
    later = await runner.resume(session.id, {"go": "first"})
    assert [r.id for r in later.interrupts] == ["sure"] and later.session.state == {}
    await runner.restore_checkpoint(session.id, paused.session.checkpoint_id)
    again = await runner.resume(session.id, {"go": "second"})
    assert [r.message for r in again.interrupts] == ["Sure about answer: second?"]
    done = await runner.resume(session.id, {"sure": "yes"})
    assert done.output == "done: yes"
    with pytest.raises(UnknownCheckpointError):
        await runner.restore_checkpoint(session.id, "unknown")


def explode(node_input: str) -> str:
    raise RuntimeError("boom")


async def closed_session(store, how: str):
    """A session that paused once (its checkpoint returned) and then ended ``how``."""
    edges = [(START, ask, explode if how == SessionStatus.FAILED else echo)]
    runner = Runner(Workflow("closing", edges=edges), store)
    session = await runner.create_session()
    paused = await runner.run(session.id, "x")
    if how == SessionStatus.CANCELLED:
        await runner.cancel(session.id)
    else:
        await runner.resume(session.id, {"go": "yes"}, decided_by="ada")
    return runner, session.id, paused.session.checkpoint_id


@pytest.mark.parametrize("how", [SessionStatus.COMPLETED, SessionStatus.FAILED, SessionStatus.CANCELLED])
async def test_a_closed_session_cannot_be_rewound(store, how):
    runner, session_id, checkpoint_id = await closed_session(store, how)
    before = await store.get_session(session_id)
    assert before.status == how
    events = len(await store.list_events(session_id))

    with pytest.raises(SessionClosedError) as refused:
        await runner.restore_checkpoint(session_id, checkpoint_id, decided_by="ada")

    assert refused.value.code == "session_closed" and refused.value.details["status"] == how
    after = await store.get_session(session_id)
    assert (after.status, after.version, after.checkpoint_id) == (how, before.version, before.checkpoint_id)
    assert (after.output, after.state) == (before.output, before.state)
    assert len(await store.list_events(session_id)) == events
    assert await store.pending_interrupts(session_id) == []
    assert await store.take_answers(session_id) == []
    assert (await store.get_interrupt(session_id, "go")).status != "pending"


async def test_a_rewind_never_reopens_an_interrupt_someone_else_decided(store):
    runner = two_pauses(store)
    session = await runner.create_session()
    first = await runner.run(session.id, "x")
    await runner.resume(session.id, {"go": "first"}, decided_by="reviewer")
    before = await store.get_session(session.id)
    events = len(await store.list_events(session.id))

    with pytest.raises(CheckpointDecidedError) as refused:
        await runner.restore_checkpoint(session.id, first.session.checkpoint_id, decided_by="client")

    assert refused.value.code == "checkpoint_decided"
    assert refused.value.details["interrupt_id"] == "go" and refused.value.details["decided_by"] == "reviewer"
    assert "go" in refused.value.message and "reviewer" in refused.value.message
    after = await store.get_session(session.id)
    assert (after.version, after.checkpoint_id, after.status) == (before.version, before.checkpoint_id, "waiting")
    assert len(await store.list_events(session.id)) == events
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["sure"]
    decided = await store.get_interrupt(session.id, "go")
    assert (decided.status, decided.decided_by, decided.response) == ("resolved", "reviewer", "first")
    with pytest.raises(CheckpointDecidedError):  # an answer stored without a decider is not the client's either
        await runner.restore_checkpoint(session.id, first.session.checkpoint_id)


def last(node_input: str):
    return RequestInput(interrupt_id="last", message=f"Last word on {node_input}?")


async def test_a_rewind_never_goes_back_past_a_decision_someone_else_made_later(store):
    """The client answered go; a reviewer answered sure, opened after go's pause; the session waits
    on last. Rewinding to go's pause would re-open only the client's own answer, but it would undo
    the reviewer's decision: refused, nothing changed."""
    runner = Runner(Workflow("thrice", edges=[(START, ask, echo, check, last, finish)]), store)
    session = await runner.create_session()
    first = await runner.run(session.id, "x")
    await runner.resume(session.id, {"go": "first"}, decided_by="client")
    waiting = await runner.resume(session.id, {"sure": "yes"}, decided_by="reviewer")
    assert [r.id for r in waiting.interrupts] == ["last"]
    before = await store.get_session(session.id)

    with pytest.raises(CheckpointDecidedError) as refused:
        await runner.restore_checkpoint(session.id, first.session.checkpoint_id, decided_by="client")

    assert refused.value.details["interrupt_id"] == "sure" and refused.value.details["decided_by"] == "reviewer"
    after = await store.get_session(session.id)
    assert (after.version, after.checkpoint_id) == (before.version, before.checkpoint_id)
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["last"]
    mine = await runner.restore_checkpoint(session.id, waiting.session.checkpoint_id, decided_by="client")
    assert mine.checkpoint_id == waiting.session.checkpoint_id  # no later decision: allowed


async def test_a_rewind_reopens_the_rewinders_own_answer(store):
    runner = two_pauses(store)
    session = await runner.create_session()
    first = await runner.run(session.id, "x")
    await runner.resume(session.id, {"go": "first"}, decided_by="client")

    restored = await runner.restore_checkpoint(session.id, first.session.checkpoint_id, decided_by="client")

    assert restored.checkpoint_id == first.session.checkpoint_id
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["go"]
    assert (await store.get_interrupt(session.id, "sure")).status == "cancelled"
    again = await runner.resume(session.id, {"go": "second"}, decided_by="client")
    assert [r.message for r in again.interrupts] == ["Sure about answer: second?"]
