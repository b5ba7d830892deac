"""Nodes and workflows as tools: wrapping, inputs, isolation, and interrupts raised inside."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    START,
    ConfigurationError,
    Context,
    Event,
    FunctionCall,
    LlmAgent,
    NodeTool,
    RequestInput,
    ScriptedModel,
    SessionStatus,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, responses, start, texts


def call(name: str, **args) -> FunctionCall:
    return FunctionCall(name=name, args=args)


class Lookup(BaseModel):
    user_id: str


def lookup(node_input: Lookup):
    yield Event(message=f"looking up {node_input.user_id} (internal)")
    yield {"user_id": node_input.user_id, "tier": "VIP"}


lookup_wf = Workflow("lookup_wf", edges=[(START, lookup)], input_schema=Lookup, description="Look a customer up.")


# -- wrapping -------------------------------------------------------------------------------


def test_an_agent_cannot_be_a_tool():
    inner = LlmAgent("inner")
    with pytest.raises(ConfigurationError, match="Agent inner cannot be a tool"):
        LlmAgent("outer", tools=[inner])


def test_a_workflow_tool_needs_an_input_schema():
    with pytest.raises(ConfigurationError, match="needs an input_schema"):
        LlmAgent("a", tools=[Workflow("bare", edges=[(START, lookup)])])


def test_nodes_in_tools_are_wrapped_and_declared_from_their_schema_or_signature():
    def discount(tier: str, amount: int = 0) -> str:
        """Compute a discount."""
        return tier

    agent = LlmAgent("a", tools=[lookup_wf, node(discount)])
    wf_tool, fn_tool = agent.tools
    assert isinstance(wf_tool, NodeTool) and isinstance(fn_tool, NodeTool)
    assert wf_tool.declaration()["description"] == "Look a customer up."
    assert wf_tool.parameters()["required"] == ["user_id"]
    assert fn_tool.parameters()["required"] == ["tier"]
    assert fn_tool.parameters()["properties"]["amount"]["default"] == 0


def test_a_primitive_input_schema_is_wrapped_as_request():
    def same(node_input: str) -> str:
        return node_input

    echo = Workflow("echo", edges=[(START, same)], input_schema=str)
    assert NodeTool(echo).parameters() == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }


async def test_a_primitive_input_reaches_the_child_unwrapped():
    seen = []

    def shout(node_input: str) -> str:
        seen.append(node_input)
        return node_input.upper()

    echo = Workflow("echo", edges=[(START, shout)], input_schema=str)
    model = ScriptedModel([call("echo", request="hi"), "done"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[echo]), "x")
    assert seen == ["hi"]
    assert responses(result.events, "echo")[0].response == {"result": "HI"}


# -- running --------------------------------------------------------------------------------


async def test_the_child_runs_on_its_own_branch_and_stays_out_of_the_models_context():
    model = ScriptedModel([call("lookup_wf", user_id="c1"), "It is a VIP."])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[lookup_wf]), "who is c1?")
    assert result.status == SessionStatus.COMPLETED
    [fc] = calls(result.events, "lookup_wf")
    child_events = [e for e in result.events if e.node_info.path.startswith(f"agent@1/lookup_wf@{fc.id}")]
    assert child_events, "the child's events are stored"
    assert {e.branch for e in child_events} == {f"lookup_wf@{fc.id}"}
    assert child_events[0].node_info.path == f"agent@1/lookup_wf@{fc.id}/lookup@1"
    assert child_events[0].author == "lookup_wf"
    # the model sees the tool's response, never the child's own events
    sent = model.requests[1].contents
    assert not any("internal" in c.text for c in sent)
    assert sent[-1].parts[0].function_response.response == {"user_id": "c1", "tier": "VIP"}


async def test_argument_errors_of_a_node_tool_go_back_to_the_model():
    model = ScriptedModel([call("lookup_wf", wrong="c1"), call("lookup_wf", user_id="c1"), "ok"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[lookup_wf]), "x")
    first, second = responses(result.events, "lookup_wf")
    assert "error" in first.response and first.response["errors"][0]["path"] == ["user_id"]
    assert second.response["tier"] == "VIP"


async def test_a_none_result_becomes_result_none():
    @node
    def nothing(x: int):
        return None

    model = ScriptedModel([call("nothing", x=1), "ok"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[nothing]), "x")
    assert responses(result.events, "nothing")[0].response == {"result": None}


async def test_an_interrupt_inside_a_node_tool_reaches_the_session_and_its_answer_resumes_the_child():
    counts = Counts()

    @node(rerun_on_resume=True)
    def calculate_discount(tier: str, ctx: Context):
        counts.hit("discount")
        yield Event(message="Checking discount rules...")
        answer = ctx.resume_inputs.get("confirm_vip")
        if answer is None:
            yield RequestInput(interrupt_id="confirm_vip", message="Apply VIP discount?")
            return
        yield "20% off" if answer == "yes" else "5% off"

    model = ScriptedModel([call("calculate_discount", tier="VIP"), "You get 20% off."])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[calculate_discount]), "discount?")
    assert result.status == SessionStatus.WAITING
    [fc] = calls(result.events, "calculate_discount")
    [record] = result.interrupts
    assert record.id == "confirm_vip"
    assert record.branch == f"calculate_discount@{fc.id}"
    assert record.path == f"agent@1/calculate_discount@{fc.id}"
    assert model.calls == 1
    call_event = next(e for e in result.events if e.function_calls())
    assert call_event.long_running_tool_ids == [fc.id]

    result = await runner.resume(sid, {"confirm_vip": "yes"})
    assert result.status == SessionStatus.COMPLETED
    assert counts["discount"] == 2  # the node reruns (it asked to), nothing else does
    assert responses(result.events, "calculate_discount")[0].response == {"result": "20% off"}
    assert texts(result.events)[-1] == "You get 20% off."
    assert model.calls == 2


async def test_two_calls_of_one_node_tool_never_share_resume_state():
    @node(rerun_on_resume=True)
    def confirm(item: str, ctx: Context):
        answer = ctx.resume_inputs.get("ok")
        if answer is None:
            yield RequestInput(interrupt_id="ok", message=f"ok {item}?")
            return
        yield f"{item}:{answer}"

    both = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "confirm", "args": {"item": "a"}}},
            {"functionCall": {"name": "confirm", "args": {"item": "b"}}},
        ],
    }
    model = ScriptedModel([both, "b is done", "both are done"])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[confirm]), "x")
    records = {r.message: r.id for r in result.interrupts}
    assert set(records) == {"ok a?", "ok b?"}
    assert records["ok a?"] != records["ok b?"]
    result = await runner.resume(sid, {records["ok b?"]: "B"})
    assert result.status == SessionStatus.WAITING
    # as in ADK, each result gets a model turn while the other call is still pending
    assert [r.response["result"] for r in responses(result.events, "confirm")] == ["b:B"]
    assert texts(result.events) == ["b is done"]
    result = await runner.resume(sid, {records["ok a?"]: "A"})
    assert result.status == SessionStatus.COMPLETED
    assert [r.response["result"] for r in responses(result.events, "confirm")] == ["a:A"]
    assert model.calls == 3
