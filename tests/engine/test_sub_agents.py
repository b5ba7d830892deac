"""Task-mode sub-agents (ADK 2.13 ``_TaskAgentTool``): delegated by a call named after them, they
talk with the user until ``finish_task``; their interrupts reach the inbox and a fresh runner
resumes them without calling the model or a tool again."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    ConfigurationError,
    FunctionCall,
    FunctionTool,
    InMemoryStore,
    LlmAgent,
    Runner,
    ScriptedModel,
    SessionStatus,
)
from tests.engine.helpers import Counts, responses, start


class Payment(BaseModel):
    card: str


def _coordinator(model: ScriptedModel, counts: Counts) -> LlmAgent:
    def check_card(card: str) -> str:
        """Check a card."""
        counts.hit("check_card")
        return f"{card} ok"

    payment = LlmAgent(
        "payment",
        model=model,
        mode="task",
        output_schema=Payment,
        description="Collects the card.",
        tools=[FunctionTool(check_card, require_confirmation=True)],
    )
    return LlmAgent("coordinator", model=model, sub_agents=[payment])


async def test_a_sub_agent_talks_with_the_user_asks_for_approval_and_returns_its_result():
    counts = Counts()
    model = ScriptedModel(
        [
            FunctionCall(name="payment", args={"request": "get the card"}),
            "Your card number?",
            FunctionCall(name="check_card", args={"card": "4242"}),
            FunctionCall(name="finish_task", args={"card": "4242"}),
            "Paid.",
        ]
    )
    store = InMemoryStore()
    runner, sid, result = await start(_coordinator(model, counts), "pay", store=store)
    assert result.status == SessionStatus.WAITING  # the sub-agent waits for the user's reply
    [delegation] = [c for e in result.events for c in e.function_calls() if c.name == "payment"]
    asked = [e for e in result.events if e.author == "payment" and e.text]
    assert [(e.node_info.path, e.isolation_scope) for e in asked] == [
        (f"coordinator@1/payment@{delegation.id}", delegation.id)
    ]

    result = await runner.run(sid, "4242")  # the message goes to the sub-agent
    assert result.status == SessionStatus.WAITING
    [approval] = result.interrupts
    assert approval.kind == "confirmation" and approval.path.startswith("coordinator@1/payment@")

    fresh = Runner(_coordinator(model, counts), store)  # another process takes the answer
    result = await fresh.resume(sid, {approval.id: {"confirmed": True}})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Paid."
    assert counts["check_card"] == 1
    assert model.calls == 5  # no model call was repeated
    [task] = responses(await store.list_events(sid), "payment")
    assert task.response == {"card": "4242"}


def test_only_task_mode_agents_can_be_sub_agents():
    with pytest.raises(ConfigurationError, match="mode='task'"):
        LlmAgent("coordinator", sub_agents=[LlmAgent("helper")])
