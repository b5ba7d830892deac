"""Nested interrupts: a node that asks, in a workflow, used as a tool by an agent, in a workflow.

Each layer keeps its own state in the checkpoint; answers reach the layer that asked; work done
before an interrupt never runs again (every function and model call is counted).
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    START,
    Content,
    Context,
    Event,
    FunctionCall,
    LlmAgent,
    Part,
    RequestInput,
    ScriptedModel,
    SessionStatus,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, responses, start


class Item(BaseModel):
    item: str


def two_calls(name: str, *items: str) -> Content:
    return Content(
        role="model",
        parts=[Part(function_call=FunctionCall(name=name, args={"item": item})) for item in items],
    )


def build(counts: Counts, model: ScriptedModel) -> Workflow:
    """outer: prep → agent (tool: inner) → after;  inner: fetch → ask → finish."""

    def fetch(node_input: Item):
        counts.hit(f"fetch:{node_input.item}")
        yield Event(state={"last_fetched": node_input.item})
        yield {"item": node_input.item, "price": len(node_input.item)}

    def ask(node_input: dict):
        counts.hit(f"ask:{node_input['item']}")
        return RequestInput(interrupt_id="approve", message=f"Buy {node_input['item']}?", payload=node_input)

    def finish(node_input):
        counts.hit("finish")
        return f"bought {node_input}"

    inner = Workflow("inner", edges=[(START, fetch, ask, finish)], input_schema=Item, description="Buy one item.")
    agent = LlmAgent("agent", model=model, instruction="Buy what is asked.", tools=[inner])

    def prep(node_input: str):
        counts.hit("prep")
        return node_input

    def after(node_input: str):
        counts.hit("after")
        return f"summary: {node_input}"

    return Workflow("outer", edges=[(START, prep, agent, after)])


@pytest.mark.parametrize("order", [("apple", "kiwi"), ("kiwi", "apple")])
async def test_two_nested_interrupts_pending_at_once_are_resumed_on_their_own_in_either_order(order):
    counts = Counts()
    model = ScriptedModel([two_calls("inner", "apple", "kiwi"), "one bought", "Bought both."])
    runner, sid, result = await start(build(counts, model), "apple and kiwi")
    assert result.status == SessionStatus.WAITING
    asks = {r.message: r for r in result.interrupts}
    assert set(asks) == {"Buy apple?", "Buy kiwi?"}
    assert asks["Buy apple?"].id != asks["Buy kiwi?"].id  # one interrupt id, two wire ids
    tool_calls = {c.args["item"]: c.id for c in calls(result.events, "inner")}
    for item in ("apple", "kiwi"):
        record = asks[f"Buy {item}?"]
        assert record.branch == f"inner@{tool_calls[item]}"
        assert record.path == f"outer@1/agent@1/inner@{tool_calls[item]}/ask@1"
    before = dict(counts)
    assert before == {"prep": 1, "fetch:apple": 1, "ask:apple": 1, "fetch:kiwi": 1, "ask:kiwi": 1}
    assert model.calls == 1

    first, second = order
    result = await runner.resume(sid, {asks[f"Buy {first}?"].id: "yes"})
    assert result.status == SessionStatus.WAITING
    assert [r.message for r in result.interrupts] == [f"Buy {second}?"]
    assert responses(result.events, "inner")[0].response == {"result": "bought yes"}
    assert counts["finish"] == 1 and counts["after"] == 0
    assert model.calls == 2

    result = await runner.resume(sid, {asks[f"Buy {second}?"].id: "yes"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "summary: Bought both."
    # nothing that ran before a pause ran again
    assert counts == {**before, "finish": 2, "after": 1}
    assert model.calls == 3


async def test_each_layer_keeps_its_own_state():
    counts = Counts()
    model = ScriptedModel([two_calls("inner", "fig"), "Bought the fig."])
    runner, sid, result = await start(build(counts, model), "a fig")
    checkpoint = (await runner.store.get_session(sid)).checkpoint
    outer = checkpoint["root"]["child"]
    assert outer["counters"] == {"prep": 1, "agent": 1}
    agent = outer["nodes"]["agent"]["child"]
    [pending] = agent["pending"].values()
    inner = pending["slot"]["child"]
    assert inner["counters"] == {"fetch": 1, "ask": 1}
    assert inner["nodes"]["ask"]["status"] == "waiting"
    # the agent's working conversation is in its checkpoint; the resume never re-reads history
    assert [c["role"] for c in agent["transcript"]] == ["user", "model"]
    result = await runner.resume(sid, {result.interrupts[0].id: "ok"})
    assert result.output == "summary: Bought the fig."
    assert counts["fetch:fig"] == 1


async def deep_app(counts: Counts, model: ScriptedModel) -> Workflow:
    """Three layers of agents and workflows around one node that asks twice."""

    @node(rerun_on_resume=True)
    def confirm(ctx: Context, node_input: dict):
        counts.hit("confirm")
        tier = ctx.resume_inputs.get("tier")
        if tier is None:
            yield RequestInput(interrupt_id="tier", message="Confirm tier?")
            return
        amount = ctx.resume_inputs.get("amount")
        if amount is None:
            yield RequestInput(interrupt_id="amount", message="Confirm amount?")
            return
        yield f"{node_input['item']}:{tier}:{amount}"

    innermost = Workflow("innermost", edges=[(START, confirm)], input_schema=Item)
    middle_agent = LlmAgent("middle_agent", model=model, tools=[innermost])
    middle = Workflow("middle", edges=[(START, middle_agent)], input_schema=Item)
    top_agent = LlmAgent("top_agent", model=model, tools=[middle])
    return Workflow("top", edges=[(START, top_agent)])


async def test_interrupts_at_depth_reach_the_session_and_their_answers_come_back_down():
    counts = Counts()
    model = ScriptedModel(
        [
            FunctionCall(name="middle", args={"item": "car"}),  # top_agent
            FunctionCall(name="innermost", args={"item": "car"}),  # middle_agent
            "middle done",  # middle_agent after the tool
            "top done",  # top_agent after the tool
        ]
    )
    runner, sid, result = await start(await deep_app(counts, model), "buy a car")
    [tier] = result.interrupts
    assert tier.message == "Confirm tier?"
    assert tier.path.count("/") == 5  # top@1/top_agent@1/middle@…/middle_agent@1/innermost@…/confirm@1
    assert model.calls == 2

    result = await runner.resume(sid, {"tier": "gold"})
    [amount] = result.interrupts
    assert amount.message == "Confirm amount?"  # a second item appears, never pre-answered
    assert amount.id != tier.id
    assert model.calls == 2

    result = await runner.resume(sid, {"amount": "100"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "top done"
    assert counts["confirm"] == 3  # it asked to rerun; nothing above it reran
    assert model.calls == 4
    inner_response = responses(await runner.store.list_events(sid), "innermost")[0]
    assert inner_response.response == {"result": "car:gold:100"}


async def test_a_workflow_nested_as_a_node_pauses_and_resumes_without_rerunning_its_finished_nodes():
    counts = Counts()

    def before(node_input: str):
        counts.hit("before")
        return node_input.upper()

    def ask(node_input: str):
        counts.hit("ask")
        return RequestInput(interrupt_id="ok", message=f"ok {node_input}?")

    def after(node_input: str):
        counts.hit("after")
        return f"inner got {node_input}"

    def outer_end(node_input: str):
        counts.hit("outer_end")
        return node_input

    inner = Workflow("inner", edges=[(START, before, ask, after)])
    outer = Workflow("outer", edges=[(START, inner, outer_end)])
    runner, sid, result = await start(outer, "x")
    [record] = result.interrupts
    assert record.path == "outer@1/inner@1/ask@1"
    ask_event = next(e for e in result.events if e.function_calls())
    assert ask_event.author == "inner"  # function nodes take the name of their own workflow
    result = await runner.resume(sid, {"ok": "yes"})
    assert result.output == "inner got yes"
    assert counts == {"before": 1, "ask": 1, "after": 1, "outer_end": 1}
