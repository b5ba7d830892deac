"""Crash safety as a property (issue 16): each nested shape, crashed at every store write point.

For every shape of :mod:`tests.engine.crash_shapes` a clean run first counts the store's write
points (commits, answers, lease writes). Then, for each write point in turn, a run over a store
that dies there (:class:`~tests.engine.crash.CrashingStore`: that write and every later call
fail) is followed, once the dead worker's lease has expired, by a fresh runner over the same
store, driven on until the session is done. Asserted each time:

- no step or tool ran after its completion was stored, and no step, tool or model turn ran more
  than twice (a second time only when it had run before the crash, its completion not stored);
- the session ends as the clean run did (status, output, state);
- the session is never ``waiting`` with nothing to resume it (the stores also refuse to commit it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engine import InMemoryStore, Runner, SessionStatus, Store, awaits_message
from tests.engine.crash import Clock, Crashed, CrashingStore
from tests.engine.crash_shapes import SHAPES, Probe, drive

TTL = 30.0

Expire = Callable[[str], Awaitable[None]]

WRITE_POINTS = {"parallel_branches": 25, "nested_tool": 14, "two_levels": 17, "parallel_calls": 22, "long_running": 13}
"""Write points of each shape's clean run (a change here means the engine writes differently)."""


async def assert_resumable(store: Store, session_id: str) -> None:
    record = await store.get_session(session_id)
    if record.status == SessionStatus.WAITING:
        can_resume = (
            await store.pending_interrupts(session_id)
            or await store.take_answers(session_id)
            or awaits_message(record.checkpoint)
        )
        assert can_resume, f"waiting with nothing to resume it: {record.checkpoint}"


async def clean_run(shape: str, inner: Store) -> tuple[dict[str, Any], Probe, list[str]]:
    probe = Probe()
    store = CrashingStore(inner)
    runner = Runner(SHAPES[shape](probe), store)
    session = await runner.create_session()
    probe.store, probe.session_id = inner, session.id
    store.writes.clear()
    result = await drive(runner, session.id)
    outcome = {"status": result.status, "output": result.output, "state": result.session.state}
    return outcome, probe, list(store.writes)


async def check_every_write_point(
    shape: str, new_store: Callable[[], tuple[Store, Expire]], *, exact: bool = True
) -> int:
    """Crash ``shape`` at each write point of its clean run over stores from ``new_store`` (a
    store and a function that lets the dead worker's lease expire); returns the count of points.

    ``exact=False``: the store's threads may interleave parallel branches so that a run writes
    once less than the clean run did (two branches' checkpoints in one commit); a point such a
    run never reaches is then a run without a crash, which must still end the same."""
    expected, clean_probe, writes = await clean_run(shape, new_store()[0])
    assert expected["status"] == SessionStatus.COMPLETED
    assert set(clean_probe.runs.values()) == {1} and not clean_probe.reruns_after_completion

    for point in range(1, len(writes) + 1):
        probe = Probe()
        inner, expire = new_store()
        store = CrashingStore(inner, crash_at=point)
        app = SHAPES[shape](probe)
        dying = Runner(app, store, lease_ttl=TTL)
        session = await dying.create_session()  # before the count: the write points are the run's
        store.writes.clear()
        probe.store, probe.session_id = inner, session.id
        try:
            finished = await drive(dying, session.id)
        except Crashed:
            finished = None
        if finished is not None:
            assert not exact and point >= len(writes) - 1 and not store.crashed, (shape, point)
            assert {"status": finished.status, "output": finished.output, "state": finished.session.state} == expected
            continue
        assert store.crashed
        await assert_resumable(inner, session.id)
        ran_before = dict(probe.runs)

        await expire(session.id)  # the dead worker's lease expires
        result = await drive(Runner(app, inner, lease_ttl=TTL), session.id)
        where = f"{shape}, crash at write {point} ({writes[point - 1]})"
        assert not probe.reruns_after_completion, where
        assert all(count <= 2 for count in probe.runs.values()), (where, probe.runs)
        assert all(ran_before.get(key, 0) == 1 for key, n in probe.runs.items() if n == 2), (where, probe.runs)
        outcome = {"status": result.status, "output": result.output, "state": result.session.state}
        assert outcome == expected, where
        await assert_resumable(inner, session.id)
    return len(writes)


def memory_store() -> tuple[Store, Expire]:
    clock = Clock()

    async def expire(session_id: str) -> None:
        clock.advance(TTL + 1)

    return InMemoryStore(clock=clock), expire


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_crash_at_any_write_point_reruns_nothing_finished_and_ends_the_same(shape, caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")  # each crash logs the dying run's failure
    assert await check_every_write_point(shape, memory_store) == WRITE_POINTS[shape]
