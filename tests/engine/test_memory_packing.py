"""InMemoryStore packs a paused session's events (engine/_memory_data.py): they read back as written."""

from __future__ import annotations

import threading

from engine import Content, Event, InMemoryStore, NodeInfo, Part
from engine._memory_data import event_json, pack, unpack
from engine._store import Commit, SessionStatus


def _events(n: int) -> list[Event]:
    texts = ["plain", "line one\nline two", "ünïcödé ✓ \u2028", '{"json": "inside"}', ""]
    return [
        Event(
            author="node",
            invocation_id="inv",
            content=Content(role="model", parts=[Part(text=texts[i % len(texts)] * (i + 1))]),
            node_info=NodeInfo(path=f"wf@1/node@{i}"),
            state={"k": i},
        )
        for i in range(n)
    ]


def test_packed_lines_come_back_byte_for_byte():
    lines = [event_json(e) for e in _events(7)]
    assert unpack(pack(lines)) == lines
    assert len(pack(lines)) < sum(map(len, lines)) / 2


def test_threads_pack_and_unpack_at_once_without_mixing_their_chunks():
    failures: list[str] = []

    def work(seed: int) -> None:
        for i in range(200):
            lines = [f'{{"thread":{seed},"i":{i},"pad":"{"x" * (seed + i)}"}}'.encode()]
            if unpack(pack(lines)) != lines:
                failures.append(f"{seed}/{i}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


async def test_a_session_paused_twice_lists_every_event_as_committed():
    store = InMemoryStore()
    record = await store.create_session(app_name="app", user_id="u")
    written = _events(9)
    version = record.version
    for batch, pause in ((written[:4], True), (written[4:7], True), (written[7:], False)):
        status = SessionStatus.WAITING if pause else SessionStatus.RUNNING
        checkpoint = {"root": {"awaiting_message": True}}
        commit = Commit(events=batch, checkpoint=checkpoint, status=status, expected_version=version, pause=pause)
        version = (await store.commit(record.id, commit)).version
    listed = await store.list_events(record.id)
    assert [e.to_json() for e in listed] == [e.to_json() for e in written]
    assert listed == written
    assert [e.to_json() for e in await store.list_events(record.id, after=3)] == [e.to_json() for e in written[3:]]
