"""The lease keeper: a slow node keeps its session; a run that loses its lease stops cleanly."""

from __future__ import annotations

import asyncio

import pytest

from engine import START, ConcurrencyError, InMemoryStore, Runner, SessionStatus, Workflow
from tests.engine.helpers import Counts

TTL = 0.15  # seconds; the slow node below takes several of them


def slow_workflow(counts: Counts, gate: asyncio.Event | None = None, seconds: float = 4 * TTL) -> Workflow:
    def first():
        counts.hit("first")
        return "one"

    async def slow(node_input):
        counts.hit("slow")
        if gate is not None:
            await gate.wait()
        else:
            await asyncio.sleep(seconds)
        return f"{node_input} two"

    def last(node_input):
        counts.hit("last")
        return f"{node_input} three"

    return Workflow("wf", edges=[(START, first, slow, last)])


async def _wait_for(condition, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def test_a_node_slower_than_the_lease_keeps_it_and_runs_once():
    counts = Counts()
    store = InMemoryStore()
    wf = slow_workflow(counts)
    runner = Runner(wf, store, lease_ttl=TTL)
    session = await runner.create_session()
    await runner.start(session.id, "go")
    task = asyncio.ensure_future(runner.run_pending(session.id))
    await _wait_for(lambda: counts["slow"] == 1)
    other = Runner(wf, store, lease_ttl=TTL)
    for _ in range(3):  # well past the TTL: the other worker still finds the lease taken
        await asyncio.sleep(TTL)
        busy = await other.run_pending(session.id)
        assert busy.status == SessionStatus.RUNNING
    result = await task
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "one two three"
    assert counts == {"first": 1, "slow": 1, "last": 1}


class StealingStore(InMemoryStore):
    """Refuses renewals once ``steal`` is set, as if the lease had expired and been taken."""

    def __init__(self) -> None:
        super().__init__()
        self.steal = False
        self.fail = False

    async def acquire_lease(self, session_id, owner, ttl):
        if self.fail:
            raise OSError("store unreachable")
        if self.steal:
            return False
        return await super().acquire_lease(session_id, owner, ttl)


async def _run_until_slow(store: StealingStore, counts: Counts, gate: asyncio.Event):
    runner = Runner(slow_workflow(counts, gate), store, lease_ttl=TTL)
    session = await runner.create_session()
    await runner.start(session.id, "go")
    task = asyncio.ensure_future(runner.run_pending(session.id))
    await _wait_for(lambda: counts["slow"] == 1)
    return runner, session.id, task


async def test_a_run_whose_renewal_is_refused_stops_and_the_next_run_resumes():
    counts, gate, store = Counts(), asyncio.Event(), StealingStore()
    runner, sid, task = await _run_until_slow(store, counts, gate)
    store.steal = True
    with pytest.raises(ConcurrencyError) as info:
        await asyncio.wait_for(task, timeout=5)
    assert info.value.details["reason"] == "lease_lost"
    assert counts["last"] == 0  # the run stopped inside the slow node
    record = await store.get_session(sid)
    assert record.status == SessionStatus.RUNNING
    store.steal = False
    gate.set()
    result = await runner.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"first": 1, "slow": 2, "last": 1}


async def test_a_run_stops_when_renewals_fail_until_the_lease_runs_out():
    counts, gate, store = Counts(), asyncio.Event(), StealingStore()
    _, _, task = await _run_until_slow(store, counts, gate)
    store.fail = True
    started = asyncio.get_running_loop().time()
    with pytest.raises(ConcurrencyError) as info:
        await asyncio.wait_for(task, timeout=5)
    assert info.value.details["reason"] == "lease_lost"
    assert "store unreachable" in info.value.message
    assert asyncio.get_running_loop().time() - started < TTL * 1.5  # before another worker could take it


async def test_a_failed_renewal_is_retried_while_the_lease_lasts():
    counts, gate, store = Counts(), asyncio.Event(), StealingStore()
    _, _, task = await _run_until_slow(store, counts, gate)
    store.fail = True
    await asyncio.sleep(TTL / 3 * 1.3)  # one renewal failed
    store.fail = False
    await asyncio.sleep(TTL)
    gate.set()
    result = await asyncio.wait_for(task, timeout=5)
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"first": 1, "slow": 1, "last": 1}
