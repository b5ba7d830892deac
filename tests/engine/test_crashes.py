"""Crashes inside nested tools (issue 16): a worker dies mid-run; the next one, once the dead
worker's lease has expired, goes on from the checkpoint without rerunning finished work and
without leaving the session stuck. The store dies through :class:`CrashingStore`."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from engine import (
    EFFECT_MAY_HAVE_RUN,
    START,
    Commit,
    Context,
    FunctionCall,
    InMemoryStore,
    LlmAgent,
    OfflineModel,
    RequestInput,
    Runner,
    SessionStatus,
    StuckSessionError,
    ToolContext,
    Workflow,
    node,
)
from tests.engine.crash import Clock, Crashed, CrashingStore
from tests.engine.helpers import Counts

TTL = 30.0


class Item(BaseModel):
    item: str


def _answered(request) -> bool:
    return any(p.function_response for c in request.contents for p in c.parts)


def agent_with_inner_tool(counts: Counts, store: CrashingStore | None = None) -> Workflow:
    """outer: agent (tool: inner: count → ask → finish). ``finish`` kills ``store`` on its first run."""

    def count(node_input: Item) -> str:
        counts.hit("count")
        return node_input.item

    def ask(node_input: str) -> RequestInput:
        counts.hit("ask")
        return RequestInput(interrupt_id="ok", message=f"Buy {node_input}?")

    def finish(node_input: str) -> str:
        counts.hit("finish")
        if store is not None and counts["finish"] == 1:
            store.crash()  # the worker dies inside the node after the ask
        return f"bought: {node_input}"

    inner = Workflow("inner", edges=[(START, count, ask, finish)], input_schema=Item, description="Buy one item.")

    def policy(request):
        if _answered(request):
            return "Bought it."
        return FunctionCall(name="inner", args={"item": "tea"})

    agent = LlmAgent("agent", model=OfflineModel({"agent": policy}), tools=[inner])
    return Workflow("outer", edges=[(START, agent)])


async def test_a_worker_dying_before_a_nested_ask_is_saved_does_not_rerun_the_inner_steps(caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    counts = Counts()
    clock = Clock()
    inner = InMemoryStore(clock=clock)
    store = CrashingStore(inner)
    # the commit that would save the pause: the inner step's event is stored already
    store.crash_when = lambda name, args: name == "commit" and isinstance(args[1], Commit) and args[1].pause
    app = agent_with_inner_tool(counts)
    dying = Runner(app, store, lease_ttl=TTL)
    session = await dying.create_session()
    await dying.start(session.id, "buy tea")
    with pytest.raises(Crashed):
        await dying.run_pending(session.id)
    assert counts == {"count": 1, "ask": 1}
    assert (await inner.get_session(session.id)).status == SessionStatus.RUNNING

    survivor = Runner(app, inner, lease_ttl=TTL)
    assert (await survivor.run_pending(session.id)).status == SessionStatus.RUNNING  # the lease is still live
    clock.advance(TTL + 1)
    result = await survivor.run_pending(session.id)
    assert result.status == SessionStatus.WAITING
    [pending] = result.interrupts
    assert pending.message == "Buy tea?"
    assert counts == {"count": 1, "ask": 2}  # the ask runs again (its pause was lost), the step before it never
    result = await survivor.resume(session.id, {pending.id: "yes"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Bought it."
    assert counts == {"count": 1, "ask": 2, "finish": 1}


async def test_a_worker_dying_inside_the_node_after_an_applied_answer_leaves_no_stuck_session(caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    counts = Counts()
    clock = Clock()
    inner = InMemoryStore(clock=clock)
    store = CrashingStore(inner)
    app = agent_with_inner_tool(counts, store)
    dying = Runner(app, store, lease_ttl=TTL)
    session = await dying.create_session()
    paused = await dying.run(session.id, "buy tea")
    [pending] = paused.interrupts
    await dying.submit(session.id, {pending.id: "yes"})
    with pytest.raises(Crashed):
        await dying.run_pending(session.id)
    assert counts == {"count": 1, "ask": 1, "finish": 1}

    clock.advance(TTL + 1)
    survivor = Runner(app, inner, lease_ttl=TTL)
    result = await survivor.run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED, (result.status, result.interrupts)
    assert result.output == "Bought it."
    assert counts == {"count": 1, "ask": 1, "finish": 2}  # finish died before its result was stored
    record = await inner.get_session(session.id)
    assert record.status == SessionStatus.COMPLETED
    assert await inner.pending_interrupts(session.id) == []


class StoreBeforeTheCheck(InMemoryStore):
    """A store that still commits a session waiting with nothing to resume it."""

    @staticmethod
    def _can_resume(mem, commit) -> bool:
        return True


async def test_a_session_stored_waiting_with_nothing_pending_is_resumed_from_its_checkpoint():
    counts = Counts()
    store = StoreBeforeTheCheck()
    runner = Runner(agent_with_inner_tool(counts), store)
    session = await runner.create_session()
    paused = await runner.run(session.id, "buy tea")
    [pending] = paused.interrupts
    await runner.submit(session.id, {pending.id: "yes"})
    # what the old bug left: the answer marked applied, the checkpoint still waiting on it
    record = await store.get_session(session.id)
    [stored] = await store.take_answers(session.id)
    stuck = Commit(
        events=[],
        checkpoint=record.checkpoint,
        status=SessionStatus.WAITING,
        expected_version=record.version,
        consumed=[stored.id],
        pause=True,
    )
    await store.commit(session.id, stuck)
    assert await store.pending_interrupts(session.id) == [] and await store.take_answers(session.id) == []

    result = await Runner(agent_with_inner_tool(counts), store).run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Bought it."
    assert counts == {"count": 1, "ask": 1, "finish": 1}


async def test_the_store_refuses_to_leave_a_session_waiting_on_an_answered_interrupt():
    store = InMemoryStore()
    runner = Runner(agent_with_inner_tool(Counts()), store)
    session = await runner.create_session()
    [pending] = (await runner.run(session.id, "buy tea")).interrupts
    await runner.submit(session.id, {pending.id: "yes"})
    record = await store.get_session(session.id)
    [stored] = await store.take_answers(session.id)
    stuck = Commit(
        events=[],
        checkpoint=record.checkpoint,
        status=SessionStatus.WAITING,
        expected_version=record.version,
        consumed=[stored.id],
    )
    with pytest.raises(StuckSessionError) as refused:
        await store.commit(session.id, stuck)
    assert refused.value.code == "session_stuck"
    assert len(await store.take_answers(session.id)) == 1  # nothing stored


async def test_an_answer_marked_applied_before_the_checkpoint_showed_it_is_applied_again():
    """A run that died after the commit marking the answer applied, whose checkpoint (written
    while a sibling branch ran) did not show it applied yet: the next run re-derives it."""
    counts = Counts()
    store = InMemoryStore()
    runner = Runner(agent_with_inner_tool(counts), store)
    session = await runner.create_session()
    [pending] = (await runner.run(session.id, "buy tea")).interrupts
    await runner.submit(session.id, {pending.id: "yes"})
    record = await store.get_session(session.id)
    [stored] = await store.take_answers(session.id)
    died = Commit(
        events=[],
        checkpoint=record.checkpoint,  # still waiting on the answered interrupt
        status=SessionStatus.RUNNING,
        expected_version=record.version,
        consumed=[stored.id],
    )
    await store.commit(session.id, died)

    result = await Runner(agent_with_inner_tool(counts), store).run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Bought it."
    assert counts == {"count": 1, "ask": 1, "finish": 1}


async def test_a_session_stored_waiting_on_nothing_it_can_get_fails_with_session_stuck(caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    store = StoreBeforeTheCheck()
    runner = Runner(agent_with_inner_tool(Counts()), store)
    session = await runner.create_session()
    [pending] = (await runner.run(session.id, "buy tea")).interrupts
    record = await store.get_session(session.id)
    cancelled = Commit(
        events=[],
        checkpoint=record.checkpoint,
        status=SessionStatus.WAITING,
        expected_version=record.version,
        cancelled=[pending.id],
    )
    await store.commit(session.id, cancelled)

    result = await Runner(agent_with_inner_tool(Counts()), store).run_pending(session.id)
    assert result.status == SessionStatus.FAILED
    assert result.session.error["code"] == "session_stuck"
    assert result.session.error["interrupts"] == [pending.id]
    [event] = (await store.list_events(session.id))[-1:]
    assert event.error_code == "session_stuck"


async def test_a_node_tool_cut_off_by_a_dead_worker_runs_again_once_flagged(caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    counts = Counts()
    flags: list[bool] = []
    clock = Clock()
    inner = InMemoryStore(clock=clock)
    store = CrashingStore(inner)

    @node
    def ship(ctx: Context, node_input: Item) -> str:
        counts.hit("ship")
        flags.append(ctx.recovered)
        if counts["ship"] == 1:
            store.crash()
        return f"shipped {node_input.item}"

    def policy(request):
        return "Shipped." if _answered(request) else FunctionCall(name="ship", args={"item": "tea"})

    agent = LlmAgent("agent", model=OfflineModel({"agent": policy}), tools=[ship])
    app = Workflow("outer", edges=[(START, agent)])
    dying = Runner(app, store, lease_ttl=TTL)
    session = await dying.create_session()
    with pytest.raises(Crashed):
        await dying.run(session.id, "ship tea")
    clock.advance(TTL + 1)
    result = await Runner(app, inner).run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Shipped."
    assert flags == [False, True]
    assert any(e.custom_metadata == {EFFECT_MAY_HAVE_RUN: True} for e in await inner.list_events(session.id))


async def test_a_function_tool_cut_off_by_a_dead_worker_runs_again_once_flagged(caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    counts = Counts()
    flags: list[bool] = []
    clock = Clock()
    inner = InMemoryStore(clock=clock)
    store = CrashingStore(inner)

    def refund(order_id: str, tool_context: ToolContext) -> dict:
        """Refund an order.

        Args:
            order_id: The order.
        """
        counts.hit("refund")
        flags.append(tool_context.recovered)
        if counts["refund"] == 1:
            store.crash()
        return {"refunded": order_id}

    def policy(request):
        return "Refunded." if _answered(request) else FunctionCall(name="refund", args={"order_id": "o-1"})

    app = Workflow("outer", edges=[(START, LlmAgent("agent", model=OfflineModel({"agent": policy}), tools=[refund]))])
    dying = Runner(app, store, lease_ttl=TTL)
    session = await dying.create_session()
    with pytest.raises(Crashed):
        await dying.run(session.id, "refund o-1")
    clock.advance(TTL + 1)
    result = await Runner(app, inner).run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Refunded."
    assert flags == [False, True]
    [flag] = [e.custom_metadata for e in await inner.list_events(session.id) if e.custom_metadata]
    assert flag[EFFECT_MAY_HAVE_RUN] is True and flag["functionCallId"]
