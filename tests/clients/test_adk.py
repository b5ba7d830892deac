"""The ADK adapter end to end: ADK's reimbursement pattern, a real ADK agent, a person in the inbox.

The agent (google-adk's ``LlmAgent`` under its ``Runner``, ``InMemorySessionService``) is driven by
:class:`ReimbursementModel`, a ``BaseLlm`` that plays the sample's policy from what it is sent (no
network): up to $100 it calls ``reimburse`` at once; above, it calls the long-running
``ask_for_approval`` (a :class:`~reviewconsole_client.adk.ReviewTool`: a review in the finance
queue), tells the user the request is pending, and once the ``FunctionResponse`` says approved it
calls ``reimburse``. The manager decides through the inbox's decide view over HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
from reviewconsole_client import AsyncClient
from reviewconsole_client.adk import AdkCall, ReviewTool, pending_reviews, resume, wait_and_resume

APP = "reimbursements"
USER = "employee-7"


def _reply(*parts: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)))


def _call(name: str, args: dict) -> LlmResponse:
    return _reply(types.Part(function_call=types.FunctionCall(name=name, args=args)))


class ReimbursementModel(BaseLlm):
    """The sample's policy, decided from the last message of each request it gets (kept in ``seen``)."""

    model: str = "scripted-reimbursement"
    seen: list[types.Content] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        self.seen.append(last)
        part = last.parts[0]
        if part.text:  # "Please reimburse $200 for conference travel"
            amount = float(part.text.split("$")[1].split()[0])
            purpose = part.text.split(" for ", 1)[1]
            name = "ask_for_approval" if amount > 100 else "reimburse"
            yield _call(name, {"purpose": purpose, "amount": amount})
            return
        response = part.function_response
        status = (response.response or {}).get("status")
        if response.name == "ask_for_approval" and status == "pending":
            yield _reply(
                types.Part(text=f"Your request waits for a manager (review {response.response['review_id']}).")
            )
        elif response.name == "ask_for_approval" and status == "approved":
            yield _call(
                "reimburse",
                {"purpose": self._args(llm_request)["purpose"], "amount": self._args(llm_request)["amount"]},
            )
        elif response.name == "ask_for_approval":
            yield _reply(types.Part(text=f"Not reimbursed: {response.response.get('reason')}"))
        else:
            yield _reply(types.Part(text=f"Reimbursed: {response.response['status']}."))

    @staticmethod
    def _args(llm_request: LlmRequest) -> dict:
        calls = [p.function_call for c in llm_request.contents for p in c.parts if p.function_call]
        return dict(next(c for c in reversed(calls) if c.name == "ask_for_approval").args)


class Agent:
    """The reimbursement agent under a Runner, and what its tools did."""

    def __init__(self, client: AsyncClient) -> None:
        self.reimbursed: list[tuple[str, float]] = []

        def reimburse(purpose: str, amount: float) -> dict:
            """Reimburse the amount of money to the employee."""
            self.reimbursed.append((purpose, amount))
            return {"status": "ok"}

        def ask_for_approval(purpose: str, amount: float) -> dict:
            """Ask a manager to approve a reimbursement above $100."""
            return {
                "title": f"Reimburse ${amount:g} for {purpose}?",
                "message": f"{USER} asks to be reimbursed ${amount:g} for {purpose}.",
                "payload": {"purpose": purpose, "amount": amount},
            }

        self.model = ReimbursementModel(seen=[])
        agent = LlmAgent(
            name="reimbursement_agent",
            model=self.model,
            instruction="Reimburse up to $100 at once; ask for approval above.",
            tools=[reimburse, ReviewTool(ask_for_approval, client=client, queue="finance")],
        )
        self.sessions = InMemorySessionService()
        self.runner = Runner(agent=agent, app_name=APP, session_service=self.sessions)

    async def ask(self, text: str) -> tuple[str, list]:
        session = await self.sessions.create_session(app_name=APP, user_id=USER)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = [e async for e in self.runner.run_async(user_id=USER, session_id=session.id, new_message=message)]
        return session.id, events


def final_text(events) -> str:
    return [p.text for e in events if e.content for p in e.content.parts if p.text][-1]


async def test_a_small_amount_is_reimbursed_without_a_review(aclient):
    agent = Agent(aclient)
    _, events = await agent.ask("Please reimburse $50 for meals")
    assert pending_reviews(events) == []
    assert agent.reimbursed == [("meals", 50.0)]
    assert final_text(events) == "Reimbursed: ok."


async def test_above_100_the_manager_approves_in_the_inbox_and_the_agent_calls_reimburse(aclient, manager):
    agent = Agent(aclient)
    session_id, events = await agent.ask("Please reimburse $200 for conference travel")
    [review_id] = pending_reviews(events)
    assert agent.reimbursed == []
    assert final_text(events) == f"Your request waits for a manager (review {review_id})."
    [call] = [c for e in events for c in e.get_function_calls() if c.id in (e.long_running_tool_ids or ())]
    assert call.name == "ask_for_approval"

    review = await aclient.get(review_id)
    assert (review.status, review.queue, review.title) == (
        "pending",
        "finance",
        "Reimburse $200 for conference travel?",
    )
    assert review.payload == {"purpose": "conference travel", "amount": 200.0}
    assert AdkCall.of(review) == AdkCall(APP, USER, session_id, call.id, "ask_for_approval")
    inbox = await asyncio.to_thread(manager.http.get, "/inbox/")
    assert "Reimburse $200 for conference travel?" in inbox.text  # where the manager sees it

    waiting = asyncio.create_task(wait_and_resume(agent.runner, aclient, review_id, timeout=120))
    decided = await asyncio.to_thread(manager.decide, review.id, "approve")
    assert decided.status_code == 200
    events = await waiting

    assert agent.reimbursed == [("conference travel", 200.0)]
    assert final_text(events) == "Reimbursed: ok."
    session = await agent.sessions.get_session(app_name=APP, user_id=USER, session_id=session_id)
    [answer] = [
        r for e in session.events if e.author == "user" for r in e.get_function_responses()
    ]  # the message resume sent, as the session stored it
    assert (answer.id, answer.name) == (call.id, "ask_for_approval")  # the paused call's own id and name
    assert answer.response["status"] == "approved"
    assert answer.response["by"] == "manager" and answer.response["review_id"] == review_id


async def test_a_rejection_reaches_the_agent_and_nothing_is_reimbursed(aclient, manager):
    agent = Agent(aclient)
    _, events = await agent.ask("Please reimburse $450 for a first-class seat")
    [review_id] = pending_reviews(events)
    review = await aclient.get(review_id)
    assert (await asyncio.to_thread(manager.decide, review.id, "reject", reason="Book economy")).status_code == 200
    events = await resume(agent.runner, await aclient.wait(review, timeout=60))
    assert agent.reimbursed == []
    assert final_text(events) == "Not reimbursed: Book economy"


async def test_resume_refuses_a_pending_review_and_another_apps_review(aclient):
    agent = Agent(aclient)
    _, events = await agent.ask("Please reimburse $300 for a hotel")
    review = await aclient.get(pending_reviews(events)[0])
    with pytest.raises(ValueError, match="still pending"):
        await resume(agent.runner, review)
    other = Runner(agent=agent.runner.agent, app_name="another-app", session_service=agent.sessions)
    await aclient.cancel(review, reason="test over")
    with pytest.raises(ValueError, match="another-app"):
        await resume(other, await aclient.get(review))
