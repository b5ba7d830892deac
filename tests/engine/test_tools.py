"""Tools: declarations, argument errors, long-running tools, request_input, and confirmations."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from engine import (
    AnswerInvalidError,
    ConfigurationError,
    FunctionCall,
    FunctionTool,
    LlmAgent,
    LongRunningFunctionTool,
    ScriptedModel,
    SessionStatus,
    ToolContext,
    request_input_tool,
)
from tests.engine.helpers import Counts, calls, responses, start, texts


def call(name: str, **args) -> FunctionCall:
    return FunctionCall(name=name, args=args)


class Address(BaseModel):
    street: str
    city: str = Field(description="The city.")


def ship(address: Address, weight_kg: float, express: bool = False, tool_context: ToolContext | None = None) -> dict:
    """Ship a parcel to an address.

    Longer explanation that is not part of the summary.

    Args:
        address: Where the parcel goes.
        weight_kg (float): Weight in kilograms,
            rounded up.
        express: Next-day delivery.
    """
    return {"shipped": address.city, "kg": weight_kg, "express": express}


# -- declarations ---------------------------------------------------------------------------


def test_a_function_tool_declares_itself_from_signature_docstring_and_models():
    tool = FunctionTool(ship)
    declaration = tool.declaration()
    assert declaration["name"] == "ship"
    assert declaration["description"] == "Ship a parcel to an address."
    params = declaration["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["address", "weight_kg"]
    assert "tool_context" not in params["properties"]
    assert params["properties"]["weight_kg"]["type"] == "number"
    assert params["properties"]["weight_kg"]["description"] == "Weight in kilograms, rounded up."
    assert params["properties"]["express"] == {
        "default": False,
        "description": "Next-day delivery.",
        "title": "Express",
        "type": "boolean",
    }
    assert params["properties"]["address"]["description"] == "Where the parcel goes."
    address = params["$defs"]["Address"]
    assert address["required"] == ["street", "city"]
    assert address["properties"]["city"]["description"] == "The city."


def test_a_long_running_tool_says_so_in_its_description():
    tool = LongRunningFunctionTool(ship)
    assert tool.is_long_running
    assert "long-running operation" in tool.declaration()["description"]


def test_literal_and_enum_like_parameters_become_json_schema_enums():
    def pick(colour: Literal["red", "blue"]) -> str:
        """Pick a colour."""
        return colour

    assert FunctionTool(pick).parameters()["properties"]["colour"]["enum"] == ["red", "blue"]


def test_two_tools_with_one_name_are_refused():
    with pytest.raises(ConfigurationError, match="share a name"):
        LlmAgent("a", tools=[ship, FunctionTool(ship)])


# -- calling --------------------------------------------------------------------------------


async def test_the_model_calls_a_tool_and_gets_its_coerced_result():
    model = ScriptedModel([call("ship", address={"street": "1 Main", "city": "Oslo"}, weight_kg="2.5"), "Shipped."])
    agent = LlmAgent("agent", model=model, tools=[ship])
    _, _, result = await start(agent, "send it")
    assert result.status == SessionStatus.COMPLETED
    [response] = responses(result.events, "ship")
    assert response.response == {"shipped": "Oslo", "kg": 2.5, "express": False}
    assert response.id == calls(result.events, "ship")[0].id
    assert model.calls == 2
    assert model.requests[1].contents[-1].parts[0].function_response.name == "ship"


async def test_argument_errors_go_back_to_the_model_so_it_can_retry():
    counts = Counts()

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        counts.hit("add")
        return a + b

    model = ScriptedModel([call("add", a="one"), call("add", a=1, b=2), "3"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[add]), "1+2")
    first, second = responses(result.events, "add")
    assert "error" in first.response
    assert "a: Input should be a valid integer" in first.response["error"]
    assert "b: Field required" in first.response["error"]
    assert second.response == {"result": 3}
    assert counts["add"] == 1
    assert texts(result.events)[-1] == "3"


async def test_an_unknown_tool_gets_an_error_response():
    model = ScriptedModel([call("nope"), "sorry"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[ship]), "x")
    assert responses(result.events, "nope")[0].response == {"error": "Tool nope is not available."}


async def test_async_tools_and_tool_context_state_writes():
    async def remember(fact: str, tool_context: ToolContext) -> str:
        """Remember a fact."""
        tool_context.state["fact"] = fact
        return "noted"

    model = ScriptedModel([call("remember", fact="sky is blue"), "ok"])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[remember]), "x")
    event = next(e for e in result.events if e.function_responses())
    assert event.state_delta == {"fact": "sky is blue"}
    assert result.session.state["fact"] == "sky is blue"


# -- long-running tools ---------------------------------------------------------------------


async def test_a_long_running_tool_records_a_pending_result_and_later_results_do_not_rerun_it():
    counts = Counts()

    def export(kind: str) -> dict:
        """Export data."""
        counts.hit(kind)
        return {"status": "pending", "progress": "0%"}

    model = ScriptedModel([call("export", kind="csv"), "Started.", "Half way.", "Done."])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[LongRunningFunctionTool(export)]), "go")
    assert result.status == SessionStatus.WAITING
    [fc] = calls(result.events, "export")
    call_event = next(e for e in result.events if e.function_calls())
    assert call_event.long_running_tool_ids == [fc.id]
    assert responses(result.events, "export")[0].response == {"status": "pending", "progress": "0%"}
    assert [r.id for r in result.interrupts] == [fc.id]

    # an interim update: delivered, one model turn, still pending
    result = await runner.resume(sid, {fc.id: {"status": "in-progress", "progress": "50%"}})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == [fc.id]
    assert texts(result.events) == ["Half way."]
    # the final result on the same call id closes it
    result = await runner.resume(sid, {fc.id: {"status": "done", "file": "x.csv"}})
    assert result.status == SessionStatus.COMPLETED
    assert texts(result.events) == ["Done."]
    assert counts == {"csv": 1}
    assert model.calls == 4
    last = model.requests[-1].contents[-1].parts[0].function_response
    assert (last.id, last.response) == (fc.id, {"status": "done", "file": "x.csv"})


async def test_two_long_running_calls_in_one_turn_are_answered_independently():
    counts = Counts()

    def export(kind: str) -> dict:
        """Export data."""
        counts.hit(kind)
        return {"status": "pending"}

    both = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "export", "args": {"kind": "csv"}}},
            {"functionCall": {"name": "export", "args": {"kind": "json"}}},
        ],
    }
    model = ScriptedModel([both, "a", "b", "c"])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[LongRunningFunctionTool(export)]), "go")
    csv_id, json_id = (c.id for c in calls(result.events, "export"))
    assert sorted(r.id for r in result.interrupts) == sorted([csv_id, json_id])
    result = await runner.resume(sid, {json_id: {"status": "done"}})
    assert [r.id for r in result.interrupts] == [csv_id]
    result = await runner.resume(sid, {csv_id: {"status": "done"}})
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"csv": 1, "json": 1}  # the other pending call never re-ran (ADK #5450)


# -- request_input tool ---------------------------------------------------------------------


async def test_the_model_can_ask_the_user_with_the_request_input_tool():
    schema = {
        "type": "object",
        "properties": {"priority": {"type": "string", "enum": ["LOW", "HIGH"]}},
        "required": ["priority"],
    }
    model = ScriptedModel([call("adk_request_input", message="Which priority?", response_schema=schema), "Filed."])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[request_input_tool]), "file it")
    [ask] = calls(result.events, "adk_request_input")
    assert result.interrupts[0].id == ask.id
    assert result.interrupts[0].response_schema == schema
    call_event = next(e for e in result.events if e.function_calls())
    assert call_event.long_running_tool_ids == [ask.id]
    with pytest.raises(AnswerInvalidError):
        await runner.resume(sid, {ask.id: {"priority": "URGENT"}})
    result = await runner.resume(sid, {ask.id: {"priority": "HIGH"}})
    assert result.status == SessionStatus.COMPLETED
    sent = model.requests[-1].contents[-1].parts[0].function_response
    assert sent.response == {"priority": "HIGH"}


# -- confirmation ---------------------------------------------------------------------------


def confirming_agent(model, counts, **options):
    def refund(order: str, amount: int) -> dict:
        """Refund an order."""
        counts.hit(order)
        return {"refunded": order, "amount": amount}

    return LlmAgent("agent", model=model, tools=[FunctionTool(refund, **options)])


async def test_require_confirmation_asks_in_adk_form_and_runs_once_approved():
    counts = Counts()
    model = ScriptedModel([call("refund", order="A", amount=5), "Refunded."])
    runner, sid, result = await start(confirming_agent(model, counts, require_confirmation=True), "refund A")
    assert counts["A"] == 0
    [original] = calls(result.events, "refund")
    [ask] = calls(result.events, "adk_request_confirmation")
    assert ask.args["originalFunctionCall"]["id"] == original.id
    assert ask.args["toolConfirmation"]["confirmed"] is False
    error_event = next(e for e in result.events if responses([e], "refund"))
    assert error_event.function_responses()[0].response == {
        "error": "This tool call requires confirmation, please approve or reject."
    }
    assert list(error_event.actions.requested_tool_confirmations) == [original.id]
    assert error_event.actions.skip_summarization is True  # no model turn on the error
    assert model.calls == 1
    result = await runner.resume(sid, {ask.id: {"confirmed": True}})
    assert result.status == SessionStatus.COMPLETED
    assert counts["A"] == 1
    assert responses(result.events, "refund")[0].response == {"refunded": "A", "amount": 5}
    assert texts(result.events) == ["Refunded."]


async def test_a_decline_is_enforced_by_the_engine_the_tool_never_runs():
    counts = Counts()
    model = ScriptedModel([call("refund", order="B", amount=5), "Not refunded."])
    runner, sid, result = await start(
        confirming_agent(model, counts, require_confirmation=True, decline_message="Refund declined."), "refund B"
    )
    [ask] = calls(result.events, "adk_request_confirmation")
    result = await runner.resume(sid, {ask.id: {"confirmed": False}})
    assert result.status == SessionStatus.COMPLETED
    assert counts["B"] == 0
    assert responses(result.events, "refund")[0].response == {"error": "Refund declined."}


async def test_a_confirmation_predicate_on_the_arguments():
    counts = Counts()
    model = ScriptedModel([call("refund", order="small", amount=5), "ok"])
    predicate = {"require_confirmation": lambda args: args["amount"] > 100}
    _, _, result = await start(confirming_agent(model, counts, **predicate), "x")
    assert result.status == SessionStatus.COMPLETED
    assert counts["small"] == 1
    model = ScriptedModel([call("refund", order="big", amount=500), "ok"])
    _, _, result = await start(confirming_agent(model, counts, **predicate), "x")
    assert result.status == SessionStatus.WAITING
    assert counts["big"] == 0


@pytest.mark.parametrize("answer", [True, "yes", {"result": "approve"}, {"confirmed": True, "payload": {}}])
async def test_confirmation_answers_accept_bools_words_and_tool_confirmations(answer):
    counts = Counts()
    model = ScriptedModel([call("refund", order="C", amount=5), "ok"])
    runner, sid, _ = await start(confirming_agent(model, counts, require_confirmation=True), "x")
    result = await runner.resume(sid, {None: answer})
    assert result.status == SessionStatus.COMPLETED
    assert counts["C"] == 1


async def test_a_confirmation_answer_that_is_not_one_is_refused():
    counts = Counts()
    model = ScriptedModel([call("refund", order="C", amount=5), "ok"])
    runner, sid, _ = await start(confirming_agent(model, counts, require_confirmation=True), "x")
    with pytest.raises(AnswerInvalidError):
        await runner.resume(sid, {None: "perhaps"})


async def test_a_tool_asks_for_confirmation_in_code_and_sees_the_answer_on_rerun():
    seen = []

    def transfer(amount: int, tool_context: ToolContext) -> dict:
        """Transfer money."""
        seen.append(tool_context.tool_confirmation)
        if amount >= 100 and tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint=f"Confirm ${amount}?", payload={"limit": 1000})
            return {"status": "needs confirmation"}
        return {"result": "sent", "payload": (tool_context.tool_confirmation or {}).get("payload")}

    for answer, expected in [({"confirmed": True, "payload": {"limit": 50}}, "sent"), ({"confirmed": False}, None)]:
        seen.clear()
        model = ScriptedModel([call("transfer", amount=200), "asked", "done"])
        agent = LlmAgent("agent", model=model, tools=[FunctionTool(transfer, decline_message="Transfer rejected.")])
        runner, sid, result = await start(agent, "send 200")
        [ask] = calls(result.events, "adk_request_confirmation")
        assert ask.args["toolConfirmation"] == {"hint": "Confirm $200?", "confirmed": False, "payload": {"limit": 1000}}
        result = await runner.resume(sid, {ask.id: answer})
        response = responses(result.events, "transfer")[0].response
        if expected:
            assert response == {"result": "sent", "payload": {"limit": 50}}
            assert seen == [None, {"confirmed": True, "payload": {"limit": 50}}]
        else:
            # declined: the engine answers for the tool, which does not run again
            assert response == {"error": "Transfer rejected."}
            assert seen == [None]
