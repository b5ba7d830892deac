"""OpenAI Agents SDK (openai-agents 0.24+) adapter: ``needs_approval`` tools approved in the inbox.

A tool declared with ``@function_tool(needs_approval=True)`` stops the run: ``result.interruptions``
lists a ``ToolApprovalItem`` per call, and the run goes on from ``result.to_state()`` once each one
is approved or rejected on that ``RunState`` (the SDK's human-in-the-loop guide).
:func:`ask_approvals` files a review per approval (a ``confirm`` review showing the tool and its
arguments), :func:`apply_decisions` approves or rejects each on the ``RunState`` as its review was
decided (anything but ``approved`` is a rejection whose message says why), and
:func:`run_with_reviews` does the whole loop. ``RunState.to_string()`` / ``RunState.from_string``
let another process apply the decisions. Install with the ``openai-agents`` extra.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Runner, RunResult, RunState, ToolApprovalItem

from .aio import AsyncClient
from .reviews import Review, outcome

__all__ = ["apply_decisions", "ask_approvals", "run_with_reviews"]


def _arguments(item: ToolApprovalItem) -> Any:
    try:
        return json.loads(item.arguments or "{}")
    except ValueError:
        return item.arguments


async def ask_approvals(
    client: AsyncClient, result: RunResult, *, queue: str, thread: str = "", **fields: Any
) -> list[tuple[ToolApprovalItem, Review]]:
    """A review in ``queue`` per approval the run waits on; ``[]`` when it waits on none.

    Each is filed once per tool call (the idempotency key is ``thread`` and the call id: name the
    conversation in ``thread`` when call ids may repeat across runs). ``fields`` are more review
    fields (``due_in_seconds``, ``metadata``…); ``metadata["openai_agents"]`` names the agent,
    tool and call.
    """
    extra = dict(fields)
    title, message, metadata = extra.pop("title", None), extra.pop("message", None), extra.pop("metadata", None)
    pending = []
    for item in result.interruptions:
        where = {"agent": item.agent.name, "tool": item.name, "call_id": item.call_id, "thread": thread}
        review = await client.ask(
            title=title or f"Approve {item.name}?",
            message=message or f"The agent {item.agent.name} wants to call {item.name}.",
            queue=queue,
            kind="confirm",
            payload={"tool": item.name, "arguments": _arguments(item)},
            metadata={**(metadata or {}), "openai_agents": where},
            idempotency_key=f"openai-agents:{thread}:{item.call_id}"[:200],
            **extra,
        )
        pending.append((item, review))
    return pending


def apply_decisions(state: RunState[Any, Any], decided: list[tuple[ToolApprovalItem, Review]]) -> None:
    """Approve (``approved``) or reject (anything else) each call on ``state`` as its review ended.

    A rejection's message to the model names the reviewer and the reason (or the review's status:
    cancelled, expired). Raises ``ValueError`` for a review still pending.
    """
    for item, review in decided:
        if not review.done:
            raise ValueError(f"review {review.id} is still pending")
        result = outcome(review)
        if result["status"] == "approved":
            state.approve(item)
            continue
        why = result.get("reason") or result["status"]
        by = f" by {result['by']}" if result.get("by") else ""
        state.reject(item, rejection_message=f"The call to {item.name} was {result['status']}{by}: {why}")


async def run_with_reviews(
    agent: Agent[Any], run_input: Any, *, client: AsyncClient, queue: str, timeout: float, **fields: Any
) -> RunResult:
    """``Runner.run`` the agent; while it waits on approvals, ask, wait (``timeout`` seconds per
    round) and go on from the ``RunState``; the final ``RunResult``. Raises ``ReviewTimeoutError``."""
    result = await Runner.run(agent, run_input)
    while result.interruptions:
        pending = await ask_approvals(client, result, queue=queue, **fields)
        reviews = await asyncio.gather(*(client.wait(review, timeout=timeout) for _, review in pending))
        state = result.to_state()
        apply_decisions(state, [(item, review) for (item, _), review in zip(pending, reviews, strict=True)])
        result = await Runner.run(agent, state)
    return result
