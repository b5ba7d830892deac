"""The Store contract: every store implementation passes this suite (factories in ``stores.py``)."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from engine import (
    AlreadyDecidedError,
    Answer,
    Commit,
    ConcurrencyError,
    Event,
    InterruptRecord,
    NodeInfo,
    SessionNotFoundError,
    SessionStatus,
    StuckSessionError,
    UnknownInterruptError,
)
from tests.engine.stores import STORE_FACTORIES


@pytest.fixture(params=STORE_FACTORIES)
def store(request):
    return request.param(request)


async def new_session(store, **options):
    options.setdefault("app_name", "app")
    options.setdefault("user_id", "ada")
    return await store.create_session(**options)


def event(text: str = "", *, path: str = "", state: dict | None = None, author: str = "wf") -> Event:
    return Event(author=author, invocation_id="inv", node_info=NodeInfo(path=path), message=text or None, state=state)


def interrupt(session_id: str, wire: str, **options) -> InterruptRecord:
    return InterruptRecord(id=wire, session_id=session_id, kind="input", path="wf@1/ask@1", local_id=wire, **options)


def commit(version: int, **options) -> Commit:
    options.setdefault("events", [])
    options.setdefault("checkpoint", {"format": 1, "root": None})
    options.setdefault("status", SessionStatus.RUNNING)
    return Commit(expected_version=version, invocation_id="inv", **options)


async def opened(store, session, *wires: str):
    """Commit a pause opening interrupts ``wires``; returns the new record."""
    return await store.commit(
        session.id,
        commit(
            session.version,
            status=SessionStatus.WAITING,
            pause=True,
            opened=[interrupt(session.id, w) for w in wires],
        ),
    )


# -- sessions -------------------------------------------------------------------------------


async def test_create_and_get_a_session(store):
    created = await new_session(store, state={"k": 1}, workflow_version="3", metadata={"source": "test"})
    got = await store.get_session(created.id)
    assert (got.app_name, got.user_id, got.state, got.status) == ("app", "ada", {"k": 1}, SessionStatus.NEW)
    assert (got.version, got.workflow_version, got.metadata) == (0, "3", {"source": "test"})
    assert got.checkpoint is None


async def test_a_chosen_session_id_is_kept_and_cannot_be_reused(store):
    created = await new_session(store, session_id="s-1")
    assert created.id == "s-1"
    with pytest.raises(ConcurrencyError):
        await new_session(store, session_id="s-1")


async def test_an_unknown_session_raises_not_found(store):
    with pytest.raises(SessionNotFoundError):
        await store.get_session("nope")


async def test_records_handed_out_are_copies(store):
    created = await new_session(store, state={"k": 1})
    created.state["k"] = 2
    (await store.get_session(created.id)).state["k"] = 3
    assert (await store.get_session(created.id)).state == {"k": 1}


# -- commits --------------------------------------------------------------------------------


async def test_commit_stores_events_state_checkpoint_and_bumps_the_version(store):
    session = await new_session(store)
    record = await store.commit(
        session.id,
        commit(
            0,
            events=[event("one", path="wf@1/a@1", state={"k": 1}), event("two", path="wf@1/b@1", state={"k": 2})],
            checkpoint={"format": 1, "root": {"status": "running"}},
            output={"done": True},
            status=SessionStatus.COMPLETED,
        ),
    )
    assert record.version == 1
    assert record.state == {"k": 2}
    assert record.status == SessionStatus.COMPLETED
    assert record.output == {"done": True}
    assert record.invocation_id == "inv"
    got = await store.get_session(session.id)
    assert got.checkpoint == {"format": 1, "root": {"status": "running"}}
    assert [e.text for e in await store.list_events(session.id)] == ["one", "two"]


async def test_list_events_filters_by_path_and_skips(store):
    session = await new_session(store)
    events = [event(str(i), path=f"wf@1/n@{i % 2}") for i in range(5)]
    await store.commit(session.id, commit(0, events=events))
    assert [e.text for e in await store.list_events(session.id, path="wf@1/n@1")] == ["1", "3"]
    assert [e.text for e in await store.list_events(session.id, after=3)] == ["3", "4"]
    stored = await store.list_events(session.id)
    assert [e.id for e in stored] == [e.id for e in events]
    assert stored[0].to_json() == events[0].to_json()


async def test_a_commit_at_a_stale_version_is_refused_and_stores_nothing(store):
    session = await new_session(store)
    await store.commit(session.id, commit(0, events=[event("first")]))
    with pytest.raises(ConcurrencyError) as info:
        await store.commit(session.id, commit(0, events=[event("stale")]))
    assert info.value.retryable
    assert [e.text for e in await store.list_events(session.id)] == ["first"]
    assert (await store.get_session(session.id)).version == 1


async def test_a_commit_by_a_writer_without_the_lease_is_refused(store):
    session = await new_session(store)
    assert await store.acquire_lease(session.id, "w1", 30)
    with pytest.raises(ConcurrencyError):
        await store.commit(session.id, commit(0, events=[event("x")], lease_owner="w2"))
    record = await store.commit(session.id, commit(0, events=[event("x")], lease_owner="w1", lease_ttl=30))
    assert record.version == 1


async def test_state_prefixes_app_and_user_are_shared_and_temp_is_dropped(store):
    ada = await new_session(store, user_id="ada")
    bob = await new_session(store, user_id="bob")
    delta = {"mine": 1, "app:color": "red", "user:lang": "en", "temp:x": 9}
    record = await store.commit(ada.id, commit(0, events=[event(state=delta)]))
    assert record.state == {"mine": 1}
    assert await store.get_shared_state("app", "ada") == {"app:color": "red", "user:lang": "en"}
    assert await store.get_shared_state("app", "bob") == {"app:color": "red"}
    assert await store.get_shared_state("other", "ada") == {}
    assert (await store.get_session(bob.id)).state == {}


async def test_a_pause_keeps_a_checkpoint_that_can_be_read_back(store):
    session = await new_session(store)
    record = await store.commit(session.id, commit(0, checkpoint={"format": 1, "root": "a"}, pause=True))
    assert record.checkpoint_id
    assert await store.get_checkpoint(session.id, record.checkpoint_id) == {"format": 1, "root": "a"}
    later = await store.commit(session.id, commit(1, checkpoint={"format": 1, "root": "b"}))
    assert later.checkpoint_id == record.checkpoint_id  # only pauses keep a new checkpoint
    assert await store.get_checkpoint(session.id, record.checkpoint_id) == {"format": 1, "root": "a"}


async def test_an_unknown_checkpoint_id_gives_none(store):
    session = await new_session(store)
    assert await store.get_checkpoint(session.id, "missing") is None


async def test_errors_are_stored_with_a_failed_status(store):
    session = await new_session(store)
    record = await store.commit(session.id, commit(0, status=SessionStatus.FAILED, error={"code": "node_failed"}))
    assert (record.status, record.error) == (SessionStatus.FAILED, {"code": "node_failed"})


async def test_a_waiting_commit_with_nothing_to_resume_the_session_is_refused(store):
    """Issue 16: a session is never ``waiting`` without a pending interrupt, an answer to apply
    or an awaited message; the store refuses such a commit and stores none of it."""
    session = await new_session(store)
    with pytest.raises(StuckSessionError):
        await store.commit(session.id, commit(0, status=SessionStatus.WAITING, pause=True, events=[event("lost")]))
    record = await store.get_session(session.id)
    assert (record.status, record.version) == (SessionStatus.NEW, 0)
    assert await store.list_events(session.id) == []

    paused = await opened(store, session, "a")
    cancelling = commit(paused.version, status=SessionStatus.WAITING, pause=True, cancelled=["a"])
    with pytest.raises(StuckSessionError):
        await store.commit(session.id, cancelling)  # cancelling the last pending interrupt
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["a"]

    await store.submit_answers(session.id, [Answer("a", "yes")], event(author="user"), decided_by="ada")
    [stored] = await store.take_answers(session.id)
    # an answer stored and not applied yet resumes it; applying it while still waiting does not
    kept = await store.commit(session.id, commit(paused.version, status=SessionStatus.WAITING, pause=True))
    with pytest.raises(StuckSessionError):
        await store.commit(
            session.id, commit(kept.version, status=SessionStatus.WAITING, pause=True, consumed=[stored.id])
        )
    assert len(await store.take_answers(session.id)) == 1
    # a root awaiting the user's next message is waiting on something
    awaiting = {"format": 1, "root": {"status": "waiting", "run": "1", "awaiting_message": True}}
    await store.commit(
        session.id,
        commit(kept.version, status=SessionStatus.WAITING, pause=True, consumed=[stored.id], checkpoint=awaiting),
    )


# -- interrupts and answers -----------------------------------------------------------------


async def test_opened_interrupts_are_pending_until_cancelled(store):
    session = await new_session(store)
    record = await opened(store, session, "a", "b")
    pending = await store.pending_interrupts(session.id)
    assert sorted(r.id for r in pending) == ["a", "b"]
    assert all(r.status == "pending" and r.session_id == session.id for r in pending)
    await store.commit(session.id, commit(record.version, cancelled=["a"]))
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["b"]
    assert (await store.get_interrupt(session.id, "a")).status == "cancelled"
    assert await store.get_interrupt(session.id, "zzz") is None


async def test_answers_are_stored_with_their_event(store):
    session = await new_session(store)
    await opened(store, session, "a", "b")
    user_event = event("answer", author="user")
    await store.submit_answers(session.id, [Answer("a", {"x": 1})], user_event, decided_by="ada")
    record = await store.get_interrupt(session.id, "a")
    assert (record.status, record.response, record.decided_by) == ("resolved", {"x": 1}, "ada")
    assert record.decided_at is not None
    [stored] = await store.take_answers(session.id)
    assert (stored.interrupt_id, stored.value, stored.final) == ("a", {"x": 1}, True)
    assert await store.take_answers(session.id) == [stored]  # taking does not consume
    assert (await store.list_events(session.id))[-1].id == user_event.id
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["b"]


async def test_the_first_answer_wins_and_the_second_names_who_decided_and_when(store):
    session = await new_session(store)
    await opened(store, session, "a")
    await store.submit_answers(session.id, [Answer("a", "approve")], event(author="user"), decided_by="ada")
    events_before = len(await store.list_events(session.id))
    with pytest.raises(AlreadyDecidedError) as info:
        await store.submit_answers(session.id, [Answer("a", "reject")], event(author="user"), decided_by="bob")
    assert info.value.details["decided_by"] == "ada"
    datetime.datetime.fromisoformat(info.value.details["decided_at"])
    assert "ada" in info.value.message
    assert len(await store.list_events(session.id)) == events_before
    assert len(await store.take_answers(session.id)) == 1
    assert (await store.get_interrupt(session.id, "a")).response == "approve"


async def test_a_batch_with_one_bad_answer_stores_nothing(store):
    session = await new_session(store)
    await opened(store, session, "a")
    with pytest.raises(UnknownInterruptError) as info:
        await store.submit_answers(
            session.id, [Answer("a", 1), Answer("ghost", 2)], event(author="user"), decided_by=None
        )
    assert info.value.details["pending"] == ["a"]
    assert (await store.get_interrupt(session.id, "a")).status == "pending"
    assert await store.take_answers(session.id) == []


async def test_an_interim_answer_keeps_the_interrupt_pending(store):
    session = await new_session(store)
    await opened(store, session, "job")
    await store.submit_answers(session.id, [Answer("job", {"progress": "50%"}, final=False)], event(), decided_by=None)
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["job"]
    await store.submit_answers(session.id, [Answer("job", {"done": True})], event(), decided_by=None)
    assert await store.pending_interrupts(session.id) == []
    first, second = await store.take_answers(session.id)
    assert first.id < second.id
    assert (first.final, second.final) == (False, True)


async def test_a_message_for_a_waiting_agent_is_a_stored_answer_without_an_interrupt(store):
    session = await new_session(store)
    await store.submit_answers(session.id, [Answer("", "next message")], event(author="user"), decided_by=None)
    [stored] = await store.take_answers(session.id)
    assert (stored.interrupt_id, stored.value) == ("", "next message")


async def test_consumed_answers_are_gone_after_the_commit(store):
    session = await new_session(store)
    record = await opened(store, session, "a", "b")
    await store.submit_answers(session.id, [Answer("a", 1)], event(), decided_by=None)
    await store.submit_answers(session.id, [Answer("b", 2)], event(), decided_by=None)
    first, second = await store.take_answers(session.id)
    record = await store.get_session(session.id)
    await store.commit(session.id, commit(record.version, consumed=[first.id]))
    assert [a.id for a in await store.take_answers(session.id)] == [second.id]


async def test_a_resolved_id_can_be_opened_again_and_the_newest_is_returned(store):
    session = await new_session(store)
    record = await opened(store, session, "review")
    await store.submit_answers(session.id, [Answer("review", "again")], event(), decided_by="ada")
    record = await store.get_session(session.id)
    await opened(store, record, "review")
    newest = await store.get_interrupt(session.id, "review")
    assert newest.status == "pending"
    assert [r.id for r in await store.pending_interrupts(session.id)] == ["review"]


# -- leases ---------------------------------------------------------------------------------


async def test_a_lease_has_one_holder_until_released(store):
    session = await new_session(store)
    assert await store.acquire_lease(session.id, "w1", 30)
    assert await store.acquire_lease(session.id, "w1", 30)  # the holder may renew
    assert not await store.acquire_lease(session.id, "w2", 30)
    await store.release_lease(session.id, "w2")  # not the holder: no effect
    assert not await store.acquire_lease(session.id, "w2", 30)
    await store.release_lease(session.id, "w1")
    assert await store.acquire_lease(session.id, "w2", 30)


async def test_a_lease_expires_after_its_ttl(store):
    session = await new_session(store)
    assert await store.acquire_lease(session.id, "w1", 0.05)
    assert not await store.acquire_lease(session.id, "w2", 30)
    await asyncio.sleep(0.06)
    assert await store.acquire_lease(session.id, "w2", 30)


async def test_concurrent_commits_at_one_version_let_exactly_one_through(store):
    session = await new_session(store)
    results = await asyncio.gather(
        *(store.commit(session.id, commit(0, events=[event(str(i))])) for i in range(5)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, ConcurrencyError) for r in results if isinstance(r, Exception))
    assert len(await store.list_events(session.id)) == 1


async def test_concurrent_answers_to_one_interrupt_let_exactly_one_through(store):
    session = await new_session(store)
    await opened(store, session, "a")
    results = await asyncio.gather(
        *(store.submit_answers(session.id, [Answer("a", i)], event(), decided_by=f"u{i}") for i in range(5)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, AlreadyDecidedError) for r in results if r is not None)
    assert len(await store.take_answers(session.id)) == 1
