"""``restore_checkpoint`` on every store (factories in ``stores.py``), and ``Runner.restore_checkpoint``."""

from __future__ import annotations

import pytest

from engine import (
    START,
    Answer,
    Event,
    NodeInfo,
    RequestInput,
    Runner,
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
    taken = await store.take_deliveries(session.id)
    again = await store.commit(
        session.id, commit(first.version, events=[state_event(draft="two", extra=1)], consumed=[d.seq for d in taken])
    )
    second = await pause(store, again, "b")
    assert second.checkpoint_id != first.checkpoint_id
    events_before = len(await store.list_events(session.id))

    restored = await store.restore_checkpoint(session.id, first.checkpoint_id)

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
    await store.restore_checkpoint(session.id, first.checkpoint_id)
    assert await store.take_deliveries(session.id) == []
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


def echo(node_input: str) -> str:
    return f"answer: {node_input}"


async def test_the_runner_resumes_from_an_earlier_pause_with_another_answer():
    flow = Workflow("loop", edges=[(START, ask, echo)])
    runner = Runner(flow)
    session = await runner.create_session()
    paused = await runner.run(session.id, "x")
    done = await runner.resume(session.id, {"go": "first"})
    assert done.output == "answer: first"
    await runner.restore_checkpoint(session.id, paused.session.checkpoint_id)
    again = await runner.resume(session.id, {"go": "second"})
    assert again.output == "answer: second"
    with pytest.raises(UnknownCheckpointError):
        await runner.restore_checkpoint(session.id, "unknown")
