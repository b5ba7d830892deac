"""Model backends behind one small protocol.

A model receives an :class:`LlmRequest` (the agent's rendered instruction, the conversation as
:class:`~engine.Content` items, tool declarations, an optional output JSON Schema) and yields
:class:`LlmResponse` items: zero or more partial ones (text deltas, for streaming front ends),
then exactly one complete response holding text and/or function calls.

Backends here: :class:`ScriptedModel` (tests and trace replay: canned responses in order) and
:class:`OfflineModel` (the embedded demo: deterministic, no network, labelled ``offline``). The
OpenAI-compatible HTTP backend lives in :mod:`engine.openai_model`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._errors import ModelError
from ._events import Content, FunctionCall, Part

__all__ = ["LlmRequest", "LlmResponse", "Model", "OfflineModel", "ScriptedModel", "text_chunks"]


@dataclass
class LlmRequest:
    """One model call. ``tools`` holds ``{"name", "description", "parameters"}`` declarations
    (``parameters`` is a JSON Schema object); ``output_schema`` asks for JSON of that schema."""

    agent_name: str
    instruction: str
    contents: list[Content]
    tools: list[dict[str, Any]] = field(default_factory=list)
    output_schema: dict[str, Any] | None = None


@dataclass
class LlmResponse:
    """A model's answer; ``partial`` responses carry streamed text deltas only."""

    content: Content
    partial: bool = False


@runtime_checkable
class Model(Protocol):
    """A model backend. ``name`` is shown with drafts (e.g. ``"offline-draft-model"``)."""

    name: str
    offline: bool

    def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        """Yield partial responses (optional) and then one complete response."""
        ...


def text_chunks(text: str) -> list[str]:
    """Split text into word-sized deltas (with their trailing spaces) for streaming."""
    return re.findall(r"\S+\s*|\s+", text) or [text]


def _as_content(item: Any) -> Content:
    if isinstance(item, Content):
        return item
    if isinstance(item, str):
        return Content(role="model", parts=[Part(text=item)])
    if isinstance(item, FunctionCall):
        return Content(role="model", parts=[Part(function_call=item)])
    if isinstance(item, dict):
        data = item.get("content", item)
        content = Content.model_validate(data)
        content.role = "model"
        return content
    raise ModelError(f"Cannot turn {item!r} into a model response.")


class ScriptedModel:
    """Returns canned responses in order, whatever the request (as ADK's replay runner does).

    Items: a str (text), a :class:`~engine.Content`, a :class:`~engine.FunctionCall`, an ADK
    event or content dict, or a callable ``(LlmRequest) -> any of those``. ``stream=True`` also
    yields the text word by word as partial responses. ``requests`` records every request.

    Raises:
        ModelError: when the script runs out.
    """

    name = "scripted-model"
    offline = True

    def __init__(self, responses: Sequence[Any] = (), *, stream: bool = False) -> None:
        self.responses = list(responses)
        self.requests: list[LlmRequest] = []
        self.stream = stream
        self._next = 0

    def add(self, *responses: Any) -> None:
        """Append more canned responses."""
        self.responses.extend(responses)

    @property
    def calls(self) -> int:
        """How many responses were handed out."""
        return self._next

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.requests.append(request)
        if self._next >= len(self.responses):
            raise ModelError(
                f"The scripted model has no response left for call {self._next + 1} (agent {request.agent_name})."
            )
        item = self.responses[self._next]
        self._next += 1
        content = _as_content(item(request) if callable(item) else item)
        if self.stream and content.text:
            for chunk in text_chunks(content.text):
                yield LlmResponse(Content(role="model", parts=[Part(text=chunk)]), partial=True)
        yield LlmResponse(content)


Policy = Callable[[LlmRequest], Any]


class OfflineModel:
    """A deterministic stand-in for an LLM, used by the embedded console (no network, no key).

    ``policies`` maps an agent name to a function ``(LlmRequest) -> str | Content | FunctionCall``;
    agents without one get a short acknowledgement. Its responses stream word by word.
    """

    name = "offline-draft-model"
    offline = True

    def __init__(self, policies: dict[str, Policy] | None = None) -> None:
        self.policies: dict[str, Policy] = dict(policies or {})
        self.calls = 0

    def register(self, agent_name: str, policy: Policy) -> None:
        """Set the policy for one agent."""
        self.policies[agent_name] = policy

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.calls += 1
        policy = self.policies.get(request.agent_name)
        if policy is None:
            last = request.contents[-1].text if request.contents else ""
            item: Any = f"[offline model] Noted: {last[:200]}" if last else "[offline model] Ready."
        else:
            item = policy(request)
        content = _as_content(item)
        if content.text:
            for chunk in text_chunks(content.text):
                yield LlmResponse(Content(role="model", parts=[Part(text=chunk)]), partial=True)
        yield LlmResponse(content)
