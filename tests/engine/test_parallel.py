"""Parallel branches with a concurrency cap, JoinNode fan-in, and the parallel worker (map)."""

from __future__ import annotations

import asyncio

import pytest

from engine import (
    START,
    ConfigurationError,
    Context,
    Event,
    FunctionNode,
    JoinNode,
    ParallelWorker,
    RequestInput,
    SessionStatus,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, outputs, start, texts


class Gauge:
    """Measures how many coroutines are inside ``busy()`` at once."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    async def busy(self) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)
        for _ in range(5):
            await asyncio.sleep(0)
        self.now -= 1


def busy_node(gauge: Gauge, name: str) -> FunctionNode:
    async def body(node_input):
        await gauge.busy()
        return f"{name}:{node_input}"

    return FunctionNode(body, name=name)


# -- fan-out and the concurrency cap --------------------------------------------------------


@pytest.mark.parametrize(("cap", "peak"), [(None, 5), (2, 2), (1, 1)])
async def test_max_concurrency_caps_the_nodes_running_at_once(cap, peak):
    gauge = Gauge()
    branches = tuple(busy_node(gauge, f"n{i}") for i in range(5))
    wf = Workflow("wf", edges=[(START, branches)], max_concurrency=cap)
    _, _, result = await start(wf, "x")
    assert result.status == SessionStatus.COMPLETED
    assert gauge.peak == peak
    assert len(outputs(result.events)) == 5


def test_max_concurrency_must_be_positive():
    with pytest.raises(ConfigurationError):
        Workflow("wf", edges=[(START, lambda: None)], max_concurrency=0)


async def test_join_waits_for_every_predecessor_and_outputs_a_dict_by_name():
    counts = Counts()

    def up(node_input: str) -> str:
        return node_input.upper()

    async def slow_len(node_input: str) -> int:
        for _ in range(10):
            await asyncio.sleep(0)
        return len(node_input)

    def combine(node_input: dict):
        counts.hit("combine")
        return node_input

    join = JoinNode("join")
    wf = Workflow("wf", edges=[(START, (up, slow_len), join, combine)])
    _, _, result = await start(wf, "abc")
    assert result.output == {"up": "ABC", "slow_len": 3}
    assert counts["combine"] == 1
    join_event = next(e for e in result.events if e.node_info.path == "wf@1/join@1")
    assert join_event.branch is None  # the join runs on the branches' common prefix


async def test_a_join_fed_directly_from_start_and_a_node():
    join = JoinNode("join")
    wf = Workflow("wf", edges=[(START, (join, FunctionNode(lambda node_input: 1, name="one"))), ("one", join)])
    _, _, result = await start(wf, "x")
    assert result.output == {"one": 1}


# -- parallel worker ------------------------------------------------------------------------


async def test_a_parallel_worker_maps_a_node_over_a_list_in_input_order():
    @node(parallel_worker=True)
    async def square(node_input: int) -> int:
        for _ in range(5 - node_input):  # later items finish first
            await asyncio.sleep(0)
        return node_input * node_input

    wf = Workflow("wf", edges=[(START, square)])
    _, _, result = await start(wf, [1, 2, 3, 4])
    assert result.output == [1, 4, 9, 16]
    items = {e.node_info.path: e for e in result.events if e.output is not None}
    for k in range(1, 5):
        assert items[f"wf@1/square@1/square@{k}"].branch == f"square@{k}"
    assert items["wf@1/square@1"].output == [1, 4, 9, 16]


async def test_a_parallel_worker_caps_items_running_at_once():
    gauge = Gauge()

    @node(parallel_worker=True, max_parallel_workers=2)
    async def work(node_input: int) -> int:
        await gauge.busy()
        return node_input

    _, _, result = await start(Workflow("wf", edges=[(START, work)]), list(range(6)))
    assert result.output == list(range(6))
    assert gauge.peak == 2


async def test_a_parallel_worker_takes_a_single_item_and_an_empty_list():
    @node(parallel_worker=True)
    def echo(node_input):
        return node_input

    _, _, single = await start(Workflow("wf", edges=[(START, echo)]), "one")
    assert single.output == ["one"]
    _, _, empty = await start(Workflow("wf", edges=[(START, echo)]), [])
    assert empty.output == []


def test_max_parallel_workers_must_be_positive():
    with pytest.raises(ConfigurationError):
        ParallelWorker(lambda: None, max_parallel_workers=0)


async def test_a_failing_item_fails_the_worker_and_the_session():
    @node(parallel_worker=True)
    async def picky(node_input: int) -> int:
        await asyncio.sleep(0)
        if node_input == 2:
            raise ValueError("two is bad")
        return node_input

    _, _, result = await start(Workflow("wf", edges=[(START, picky)]), [1, 2, 3])
    assert result.status == SessionStatus.FAILED
    assert result.session.error["node_path"] == "wf@1/picky@1/picky@2"


async def test_worker_items_that_ask_pause_and_resume_one_at_a_time():
    counts = Counts()

    @node(parallel_worker=True, rerun_on_resume=True)
    def review(ctx: Context, node_input: str):
        counts.hit(node_input)
        answer = ctx.resume_inputs.get("ok")
        if node_input.startswith("ask") and answer is None:
            yield RequestInput(interrupt_id="ok", message=f"approve {node_input}?")
            return
        yield f"{node_input}:{answer or 'auto'}"

    after = Counts()

    def summary(node_input: list):
        after.hit("summary")
        return " ".join(node_input)

    wf = Workflow("wf", edges=[(START, review, summary)])
    runner, sid, result = await start(wf, ["ask-a", "auto-b", "ask-c"])
    assert result.status == SessionStatus.WAITING
    asks = calls(result.events, "adk_request_input")
    assert [c.args["message"] for c in asks] == ["approve ask-a?", "approve ask-c?"]
    a_id, c_id = asks[0].id, asks[1].id
    assert a_id != c_id  # the same interrupt id in two items gets two wire ids
    assert {e.branch for e in result.events if e.function_calls()} == {"review@1", "review@3"}

    result = await runner.resume(sid, {c_id: "yes-c"})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == [a_id]
    assert after["summary"] == 0

    result = await runner.resume(sid, {a_id: "yes-a"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "ask-a:yes-a auto-b:auto ask-c:yes-c"
    # the item that finished before the pause never ran again; the asking ones reran once
    assert counts == {"ask-a": 2, "auto-b": 1, "ask-c": 2}
    assert after["summary"] == 1


async def test_worker_items_that_do_not_rerun_complete_with_their_answers():
    @node(parallel_worker=True)
    def ask(node_input: str):
        return RequestInput(message=f"value for {node_input}?")

    wf = Workflow("wf", edges=[(START, ask)])
    runner, sid, result = await start(wf, ["x", "y"])
    x_id, y_id = (c.id for c in calls(result.events, "adk_request_input"))
    result = await runner.resume(sid, {y_id: "Y"})
    assert result.status == SessionStatus.WAITING
    result = await runner.resume(sid, {x_id: "X"})
    assert result.output == ["X", "Y"]


async def test_a_parallel_worker_of_a_workflow_keeps_each_items_state():
    inner_counts = Counts()

    def first(node_input: str):
        inner_counts.hit(f"first-{node_input}")
        return RequestInput(interrupt_id="detail", message=f"detail for {node_input}?")

    def second(node_input: str):
        return f"done {node_input}"

    inner = Workflow("inner", edges=[(START, first, second)])
    wf = Workflow("wf", edges=[(START, ParallelWorker(inner))])
    runner, sid, result = await start(wf, ["p", "q"])
    ids = [c.id for c in calls(result.events, "adk_request_input")]
    assert len(ids) == 2
    for wire in ids:
        result = await runner.resume(sid, {wire: "more"})
    assert result.output == ["done more", "done more"]
    assert inner_counts == {"first-p": 1, "first-q": 1}
    assert "inner@1" not in {e.author for e in result.events}


async def test_worker_events_keep_the_workflow_as_author():
    @node(parallel_worker=True)
    def say(node_input: str):
        yield Event(message=node_input)

    _, _, result = await start(Workflow("wf", edges=[(START, say)]), ["a", "b"])
    assert sorted(texts(result.events)) == ["a", "b"]
    assert {e.author for e in result.events if e.text} == {"wf"}
