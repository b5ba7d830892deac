"""A run's writes happen one at a time, in the order they were asked for, and a write cancelled
while it waits for its turn neither runs nor holds up the others (``RunSession._write``)."""

from __future__ import annotations

import asyncio

from engine import Event, InMemoryStore, SessionStatus
from engine._runtime import RunSession


class GatedStore(InMemoryStore):
    """Commits wait for ``release``; ``order`` lists each commit's event authors as it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[list[str]] = []
        self.active = 0
        self.most_active = 0
        self.release = asyncio.Event()

    async def commit(self, session_id, commit):
        self.order.append([e.author for e in commit.events])
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            await self.release.wait()
            return await super().commit(session_id, commit)
        finally:
            self.active -= 1


async def _session(store: GatedStore) -> RunSession:
    record = await store.create_session(app_name="app", user_id="u")
    assert await store.acquire_lease(record.id, "me", 60)
    return RunSession(store=store, record=record, invocation_id="inv", shared_state={}, pending=[], lease_owner="me")


async def _until(condition) -> None:
    async with asyncio.timeout(5):  # a guard: the wait ends on the condition
        while not condition():
            await asyncio.sleep(0)


async def _first_write_under_way(store: GatedStore, session: RunSession) -> asyncio.Future[None]:
    await session.commit([Event(author="a")])
    first = asyncio.ensure_future(session.flush())
    await _until(lambda: store.order == [["a"]])
    return first


async def test_writes_take_turns_in_order():
    store = GatedStore()
    session = await _session(store)
    first = await _first_write_under_way(store, session)
    await session.commit([Event(author="b")])
    second = asyncio.ensure_future(session.flush())
    third = asyncio.ensure_future(session._write(SessionStatus.RUNNING))
    for _ in range(5):
        await asyncio.sleep(0)
    assert store.order == [["a"]]  # the others wait while the first is in the store
    store.release.set()
    await asyncio.gather(first, second, third)
    # a then b, one at a time (the later writes, and the one commit() schedules, find nothing new)
    assert store.order[:2] == [["a"], ["b"]] and not any(store.order[2:])
    assert store.most_active == 1
    assert [e.author for e in await store.list_events(session.session_id)] == ["a", "b"]


async def test_a_write_cancelled_while_it_waits_does_not_block_the_next():
    store = GatedStore()
    session = await _session(store)
    first = await _first_write_under_way(store, session)
    await session.commit([Event(author="b")])
    cancelled = asyncio.ensure_future(session.flush())
    await asyncio.sleep(0)  # it waits for its turn
    later = asyncio.ensure_future(session._write(SessionStatus.RUNNING))
    await asyncio.sleep(0)
    cancelled.cancel()
    store.release.set()
    await asyncio.gather(first, later)
    assert cancelled.cancelled()
    assert store.order[:2] == [["a"], ["b"]] and not any(store.order[2:])  # the cancelled one took nothing
    assert store.most_active == 1
    assert [e.author for e in await store.list_events(session.session_id)] == ["a", "b"]


async def test_a_write_handed_its_turn_as_it_is_cancelled_hands_it_on():
    session = await _session(GatedStore())
    session._writing = True  # a write is under way
    second = asyncio.ensure_future(session._wait_to_write())
    third = asyncio.ensure_future(session._wait_to_write())
    await asyncio.sleep(0)  # both wait for their turn
    session._pass_write_on()  # the write under way ends: the turn goes to the second...
    second.cancel()  # ...which is cancelled before it could take it
    async with asyncio.timeout(5):  # a guard: without the hand-on, the third waits forever
        await third
    assert second.cancelled()
    assert session._writing  # the third holds the turn now
