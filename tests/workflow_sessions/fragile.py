"""Test workflows whose agent's model raises a plain exception quoting a secret while ``FAILING``
is on: ``fragile-start`` fails before its first request; ``fragile-parallel`` fails while its
other branch's request is pending (the failure cancels it). Both route to ``support``.

Registered for a test by ``tests/workflow_sessions/test_failures.py`` (``REVIEWCONSOLE["WORKFLOWS"]``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, Field

from engine import Content, LlmRequest, LlmResponse, Part
from reviewconsole.workflows import START, LlmAgent, RequestInput, Workflow, WorkflowSpec, node

SECRET = "sk-LEAK-4711"
FAILING = {"on": True}
"""While ``FAILING["on"]``, the model raises ``RuntimeError`` naming a URL with ``SECRET``."""


class FragileInput(BaseModel):
    topic: str = Field(min_length=1, max_length=200)


class SecretQuotingModel:
    """A model whose client raises with the request URL (and its key) in the message."""

    name = "fragile"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        if FAILING["on"]:
            raise RuntimeError(f"GET https://llm.example.com/v1/chat?api_key={SECRET} refused")
        yield LlmResponse(Content(role="model", parts=[Part(text="A fine answer.")]))


@node
def ask(node_input: Any) -> RequestInput:
    return RequestInput(interrupt_id="check", message="Is the topic fine?", metadata={"kind": "fragile"})


def build_start(model: Any = None) -> Workflow:
    writer = LlmAgent("writer", model=SecretQuotingModel(), instruction="Write.")
    return Workflow("fragile_start", edges=[(START, writer, ask)], input_schema=FragileInput)


def build_parallel(model: Any = None) -> Workflow:
    writer = LlmAgent("writer", model=SecretQuotingModel(), instruction="Write.")
    return Workflow("fragile_parallel", edges=[(START, ask), (START, writer)], input_schema=FragileInput)


WORKFLOWS = [
    WorkflowSpec(
        name="fragile-start", title="Fragile start", queue="support", build=build_start, input_schema=FragileInput
    ),
    WorkflowSpec(
        name="fragile-parallel",
        title="Fragile parallel",
        queue="support",
        build=build_parallel,
        input_schema=FragileInput,
    ),
]
