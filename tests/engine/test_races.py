"""Answers that race a running run: held and applied once, or refused as retryable, never lost."""

from __future__ import annotations

import asyncio
from typing import Any

from engine import (
    START,
    InMemoryStore,
    InterruptNotReadyError,
    RequestInput,
    Runner,
    SessionStatus,
    Workflow,
)
from tests.engine.helpers import Counts, HookStore


async def test_an_answer_sent_before_its_pause_is_committed_is_refused_as_retryable():
    refused: list[InterruptNotReadyError] = []
    box: dict[str, Any] = {}

    async def ask():
        yield RequestInput(interrupt_id="fast", message="?")
        # an outside system answers while this node is still running: nothing is committed yet
        try:
            await box["runner"].submit(box["sid"], {"fast": "too early"})
        except InterruptNotReadyError as exc:
            refused.append(exc)

    def after(node_input):
        return f"got {node_input}"

    store = InMemoryStore()
    runner = Runner(Workflow("wf", edges=[(START, ask, after)]), store)
    session = await runner.create_session()
    box.update(runner=runner, sid=session.id)
    result = await runner.run(session.id, "go")
    [error] = refused
    assert error.code == "interrupt_not_ready" and error.retryable
    assert error.details["interrupt_id"] == "fast"
    assert await store.take_answers(session.id) == []
    assert result.status == SessionStatus.WAITING
    # the caller retries once the pause is committed: accepted and applied
    result = await runner.resume(session.id, {"fast": "on time"})
    assert result.output == "got on time"


async def test_an_answer_stored_while_the_run_still_holds_the_lease_is_applied_by_that_run():
    counts = Counts()
    seen: dict[str, Any] = {}

    def ask():
        counts.hit("ask")
        return RequestInput(interrupt_id="q", message="?")

    def after(node_input):
        counts.hit("after")
        return f"got {node_input}"

    store = HookStore()
    runner = Runner(Workflow("wf", edges=[(START, ask, after)]), store)
    session = await runner.create_session()

    async def answer_now():
        # another worker: the answer is stored, but this run still holds the lease
        await runner.submit(session.id, {"q": "quick"})
        seen["other"] = await runner.run_pending(session.id)

    store.on_pause = answer_now
    result = await runner.run(session.id, "go")
    assert seen["other"].status == SessionStatus.WAITING  # it found the lease taken and left
    assert result.status == SessionStatus.COMPLETED  # the lease holder picked the answer up
    assert result.output == "got quick"
    assert counts == {"ask": 1, "after": 1}
    assert await store.take_answers(session.id) == []


async def test_an_answer_to_one_branch_while_another_still_runs_is_held_then_applied():
    counts = Counts()
    release = asyncio.Event()

    def fast():
        counts.hit("fast")
        return RequestInput(interrupt_id="fast_q", message="?")

    async def slow():
        counts.hit("slow")
        await release.wait()
        return "slow done"

    def after(node_input):
        counts.hit(f"after:{node_input}")

    store = HookStore()
    runner = Runner(Workflow("wf", edges=[(START, (fast, slow)), (fast, after)]), store)
    session = await runner.create_session()

    async def answer_while_running():
        # fast's pause is committed (session still running): the answer is accepted and stored
        await runner.submit(session.id, {"fast_q": "yes"})
        assert (await runner.run_pending(session.id)).status == SessionStatus.RUNNING
        release.set()

    store.on_commit = answer_while_running
    result = await runner.run(session.id, "go")
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"fast": 1, "slow": 1, "after:yes": 1}


async def test_two_workers_on_one_session_run_it_once():
    counts = Counts()
    gate = asyncio.Event()

    async def work():
        counts.hit("work")
        await gate.wait()
        return "done"

    store = InMemoryStore()
    runner = Runner(Workflow("wf", edges=[(START, work)]), store)
    session = await runner.create_session()
    await runner.start(session.id, "go")
    first = asyncio.ensure_future(runner.run_pending(session.id))
    while not counts["work"]:
        await asyncio.sleep(0)
    second = await Runner(Workflow("wf", edges=[(START, work)]), store).run_pending(session.id)
    assert second.status == SessionStatus.RUNNING
    gate.set()
    assert (await first).status == SessionStatus.COMPLETED
    assert counts["work"] == 1
