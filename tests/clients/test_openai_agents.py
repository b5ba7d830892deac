"""The OpenAI Agents SDK adapter end to end: a ``needs_approval`` tool approved or rejected in the inbox.

The agent runs on the SDK's own ``agents.testing.ScriptedModel`` (no network): it calls ``refund``
(a ``@function_tool(needs_approval=True)``), the run stops on the approval, the adapter files a
review, a manager decides it through the inbox's decide view, and the decision is applied to the
``RunState`` the run goes on from.
"""

from __future__ import annotations

import asyncio
import uuid

from agents import Agent, Runner, RunState, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from reviewconsole_client.openai_agents import apply_decisions, ask_approvals, run_with_reviews


def refund_agent(refunded: list, *, then: str) -> tuple[Agent, ScriptedModel]:
    @function_tool(needs_approval=True)
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        refunded.append((order_id, amount))
        return "refunded"

    model = ScriptedModel(
        [
            [function_call("refund", {"order_id": "A-1001", "amount": 250}, call_id="call_refund")],
            [assistant_message(then)],
        ]
    )
    return Agent(name="support", instructions="Refund when asked.", model=model, tools=[refund]), model


async def test_an_approval_in_the_inbox_lets_the_tool_run(aclient, manager):
    refunded: list = []
    agent, model = refund_agent(refunded, then="Refund sent.")
    title = f"Approve the refund of A-1001 ({uuid.uuid4().hex[:8]})?"
    running = asyncio.create_task(
        run_with_reviews(
            agent, "Refund order A-1001", client=aclient, queue="finance", timeout=120, title=title, thread=title
        )
    )
    review = await aclient.get(await asyncio.to_thread(manager.find, title))  # as the manager sees it
    assert (review.title, review.kind) == (title, "confirm")
    assert review.payload == {"tool": "refund", "arguments": {"order_id": "A-1001", "amount": 250}}
    assert (await asyncio.to_thread(manager.decide, review.id, "approve")).status_code == 200
    result = await running
    assert refunded == [("A-1001", 250.0)]
    assert result.final_output == "Refund sent."
    assert model.remaining_steps == 0


async def test_a_rejection_reaches_the_model_and_the_state_survives_a_round_trip(aclient, manager):
    refunded: list = []
    agent, model = refund_agent(refunded, then="I could not refund it.")
    result = await Runner.run(agent, "Refund order A-1001")
    [(item, review)] = await ask_approvals(aclient, result, queue="finance", thread=uuid.uuid4().hex)
    assert review.title == "Approve refund?"
    saved = result.to_state().to_string()  # another process could take it from here
    assert (await asyncio.to_thread(manager.decide, review.id, "reject", reason="Over the limit")).status_code == 200

    state = await RunState.from_string(agent, saved)
    [restored] = state.get_interruptions()
    apply_decisions(state, [(restored, await aclient.wait(review, timeout=60))])
    final = await Runner.run(agent, state)
    assert refunded == []
    assert final.final_output == "I could not refund it."
    tool_output = [i for i in model.last_call.input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert "rejected by manager: Over the limit" in str(tool_output[-1]["output"])
    assert item.call_id == restored.call_id == "call_refund"
