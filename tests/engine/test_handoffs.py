"""Handoffs: LlmAgent(handoffs=...) and HandoffGroup (each turn a node run, the active agent checkpointed)."""

from __future__ import annotations

import pytest

from engine import (
    ConfigurationError,
    Content,
    FunctionCall,
    FunctionTool,
    HandoffGroup,
    LlmAgent,
    Part,
    Runner,
    ScriptedModel,
)


def done(text: str) -> bool:
    return text.rstrip().lower().endswith("case complete.")


def transfer(name: str) -> FunctionCall:
    return FunctionCall(name="transfer_to_agent", args={"agent_name": name})


def refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order.
    """
    return {"refunded": order_id}


class Nodes:
    def __init__(self):
        self.log = []

    def on_event(self, event):
        pass

    def on_node_start(self, path, name):
        self.log.append(("start", path))

    def on_node_end(self, path, status):
        self.log.append(("end", path, status))


def team(model):
    triage = LlmAgent("triage", model=model, handoffs=["refunds"])
    refunds = LlmAgent(
        "refunds", model=model, handoffs=["triage"], tools=[FunctionTool(refund, require_confirmation=True)]
    )
    return HandoffGroup("support", [triage, refunds], done_when=done)


async def test_a_handoff_moves_the_conversation_and_each_turn_is_a_node_run():
    model = ScriptedModel(
        [
            transfer("refunds"),
            FunctionCall(name="refund", args={"order_id": "o-1"}),
            Content(role="model", parts=[Part(text="Refunded."), Part(function_call=transfer("triage"))]),
            "All done. Case complete.",
        ]
    )
    runner = Runner(team(model))
    session = await runner.create_session()
    nodes = Nodes()
    paused = await runner.run(session.id, "Refund o-1 please", listener=nodes)
    [approval] = paused.interrupts
    assert approval.kind == "confirmation"
    assert [e for e in nodes.log if e[0] == "end"] == [
        ("end", "support@1/triage@1", "completed"),
        ("end", "support@1/refunds@1", "waiting"),
        ("end", "support@1", "waiting"),
    ]
    transfers = [e for e in paused.events if e.actions and e.actions.transfer_to_agent]
    assert [e.actions.transfer_to_agent for e in transfers] == ["refunds"]
    assert model.requests[0].tools[-1]["parameters"]["properties"]["agent_name"]["enum"] == ["refunds"]

    nodes = Nodes()
    result = await runner.resume(session.id, {approval.id: {"confirmed": True}}, listener=nodes)
    assert result.status == "completed"
    assert result.output == "All done. Case complete."
    assert [e for e in nodes.log if e[0] == "start"] == [
        ("start", "support@1"),
        ("start", "support@1/refunds@1"),
        ("start", "support@1/triage@2"),
    ]
    # The triage agent sees the refund agent's text as context on its second turn.
    last = model.requests[-1]
    assert any("[refunds] said: Refunded." in c.text for c in last.contents)


async def test_a_reply_that_does_not_end_the_case_waits_for_the_users_next_message():
    model = ScriptedModel(["Which order?", transfer("refunds"), "Refund noted. Case complete."])
    runner = Runner(team(model))
    session = await runner.create_session()
    first = await runner.run(session.id, "I want a refund")
    assert first.status == "waiting" and first.interrupts == []
    await runner.start(session.id, "Order o-9")
    result = await runner.run_pending(session.id)
    assert result.output == "Refund noted. Case complete."
    assert any(c.text == "Order o-9" for c in model.requests[1].contents)


async def test_an_unknown_target_goes_back_to_the_model_as_an_error():
    model = ScriptedModel([transfer("nobody"), "Sorry. Case complete."])
    runner = Runner(team(model))
    session = await runner.create_session()
    result = await runner.run(session.id, "hi")
    assert result.output == "Sorry. Case complete."
    response = next(r for e in result.events for r in e.function_responses())
    assert "error" in response.response


async def test_too_many_handoffs_fail_the_group():
    model = ScriptedModel([transfer("refunds"), transfer("triage")] * 3)
    triage = LlmAgent("triage", model=model, handoffs=["refunds"])
    refunds = LlmAgent("refunds", model=model, handoffs=["triage"])
    runner = Runner(HandoffGroup("support", [triage, refunds], max_handoffs=3))
    session = await runner.create_session()
    result = await runner.run(session.id, "hi")
    assert result.status == "failed"


def test_handoffs_must_name_agents_of_the_group():
    with pytest.raises(ConfigurationError):
        HandoffGroup("g", [LlmAgent("a", handoffs=["b"])])
    with pytest.raises(ConfigurationError):
        LlmAgent("a", handoffs=["a"])
