"""Model calls that fail are tried again with back-off; requests are routed to a model per agent.

:class:`RetryingModel` wraps any :class:`~engine.Model`. An attempt fails when the backend raises
a transient :class:`~engine.ModelError` (``details["kind"]``: ``connection``, ``timeout``,
``rate_limited`` (429), ``server_error`` (5xx)) or when its complete response is unusable:

- ``malformed_tool_call``: a function call whose arguments are not a JSON object, or that names
  a tool the request did not declare;
- ``output_schema``: a text answer to a request with ``output_schema`` that is not JSON of
  that schema (a Markdown code fence around it is allowed, as the agent allows it);
- ``empty_reply``: no tool call and no text (blank text counts as none), e.g. an empty stream or
  a server that answered a streaming request with a body the client could not read as a stream.
  An empty answer would otherwise become an empty draft that a reviewer could approve.

Such an attempt is retried after ``min(initial_delay * multiplier**(n-1), max_delay)`` seconds
(``tenacity``'s exponential wait), or after the server's ``Retry-After`` when it sent one (capped
at ``max_retry_after``). Other errors (400, 401, 403, 404…) are not retried. When the attempts are
spent the call raises ``ModelError`` with ``kind`` of the last failure and ``attempts``; its
message says what happened in words a reviewer can read, without the server's body or any key.

Partial responses (streamed text) of an attempt that fails later were already passed on; the
complete response is yielded only once it passed the checks.

:class:`ModelRouter` sends each request to the model configured for its ``agent_name`` (else the
default), so one runner serves agents that use different models.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, RetryError, retry_if_exception, stop_after_attempt, wait_exponential

from ._errors import ModelError
from ._events import Content
from ._interrupts import validate_json
from ._models import LlmRequest, LlmResponse, Model

__all__ = ["TRANSIENT_KINDS", "ModelRetry", "ModelRouter", "RetryingModel", "json_reply"]

logger = logging.getLogger("engine.models")

TRANSIENT_KINDS = frozenset(
    {"connection", "timeout", "rate_limited", "server_error", "malformed_tool_call", "output_schema", "empty_reply"}
)
"""``ModelError.details["kind"]`` values that are retried."""

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")

_DESCRIBE = {
    "connection": "the model's server could not be reached",
    "timeout": "the model's server did not answer in time",
    "rate_limited": "the model's server refused for now (too many requests)",
    "server_error": "the model's server had an error",
    "malformed_tool_call": "the model made a malformed tool call",
    "output_schema": "the model's answer did not match the required JSON schema",
    "empty_reply": "the model's answer was empty",
}


def json_reply(text: str) -> Any:
    """Parse a JSON answer, allowing a Markdown code fence around it.

    Raises:
        ValueError: the text is not JSON.
    """
    return json.loads(_FENCE.sub("", text.strip()))


@dataclass(frozen=True)
class ModelRetry:
    """How a failing model call is tried again (delays in seconds).

    ``attempts`` counts the first call (1: no retry). ``max_retry_after`` caps a server's
    ``Retry-After``.
    """

    attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    max_retry_after: float = 60.0

    def wait(self, state: RetryCallState) -> float:
        """Seconds before the next attempt: the server's ``Retry-After`` if it sent one, else back-off."""
        error = state.outcome.exception() if state.outcome is not None else None
        retry_after = error.details.get("retry_after") if isinstance(error, ModelError) else None
        if isinstance(retry_after, int | float) and retry_after >= 0:
            return float(min(retry_after, self.max_retry_after))
        backoff = wait_exponential(multiplier=self.initial_delay, exp_base=self.multiplier, max=self.max_delay)
        return float(backoff(state))


def _transient(error: BaseException) -> bool:
    return isinstance(error, ModelError) and error.details.get("kind") in TRANSIENT_KINDS


def _check(request: LlmRequest, content: Content) -> None:
    """Raise ModelError (``malformed_tool_call`` / ``empty_reply`` / ``output_schema``) for an unusable response."""
    declared = {tool["name"] for tool in request.tools}
    calls = content.function_calls()
    for call in calls:
        if "_unparsed_arguments" in call.args or call.name not in declared:
            raise ModelError(f"The model made a malformed call of tool {call.name!r}.", kind="malformed_tool_call")
    if calls:
        return
    if not content.text.strip():
        raise ModelError("The model's answer is empty.", kind="empty_reply")
    if request.output_schema is None:
        return
    try:
        value = json_reply(content.text)
    except ValueError:
        raise ModelError("The model's answer is not JSON.", kind="output_schema") from None
    errors = validate_json(value, request.output_schema)
    if errors:
        raise ModelError("The model's answer does not match its output schema.", kind="output_schema", errors=errors)


class RetryingModel:
    """A :class:`~engine.Model` that retries its backend's failed calls (see the module docstring).

    Args:
        model: the backend.
        retry: the attempts and delays.
        sleep: awaited with the delay before each retry (default ``asyncio.sleep``; tests pass one
            that records the delays).
    """

    def __init__(
        self, model: Model, retry: ModelRetry | None = None, *, sleep: Callable[[float], Awaitable[None]] | None = None
    ) -> None:
        self.model = model
        self.name = model.name
        self.offline = model.offline
        self.retry = retry or ModelRetry()
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"RetryingModel({self.model!r}, {self.retry!r})"

    def _retrying(self) -> AsyncRetrying:
        options: dict[str, Any] = {}
        if self._sleep is not None:
            options["sleep"] = self._sleep
        return AsyncRetrying(
            stop=stop_after_attempt(max(1, self.retry.attempts)),
            wait=self.retry.wait,
            retry=retry_if_exception(_transient),
            before_sleep=self._log_retry,
            **options,
        )

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        kind = error.details.get("kind") if isinstance(error, ModelError) else type(error).__name__
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        logger.warning(
            "Model %s: attempt %d failed (%s); trying again in %.3f s.", self.name, state.attempt_number, kind, delay
        )

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        """Yield the backend's partial responses and its checked complete response.

        Raises:
            ModelError: the attempts are spent (``details``: ``kind``, ``attempts``,
                ``status_code`` when the server answered), or the failure is not retried.
        """
        attempts = 0
        try:
            async for attempt in self._retrying():
                attempts = attempt.retry_state.attempt_number
                final: Content | None = None
                try:
                    async for response in self.model.generate(request):
                        if response.partial:
                            yield response
                        else:
                            final = response.content
                    if final is None:
                        raise ModelError("The model gave no complete answer.", kind="empty_reply")
                    _check(request, final)
                except Exception:
                    attempt.retry_state.set_exception(sys.exc_info())  # type: ignore[arg-type]
                    continue
                attempt.retry_state.set_result(None)
                yield LlmResponse(final)
        except RetryError as spent:
            last = spent.last_attempt.exception()
            assert isinstance(last, ModelError)
            kind = str(last.details.get("kind", ""))
            details = {k: v for k, v in last.details.items() if k in ("kind", "status_code")}
            raise ModelError(
                f"The model {self.name} gave no usable answer after {attempts} attempts: "
                f"{_DESCRIBE.get(kind, 'it failed')}.",
                attempts=attempts,
                **details,
            ) from None


class ModelRouter:
    """A :class:`~engine.Model` that sends each request to its agent's model, else to ``default``.

    ``name`` is the default's; ``offline`` is True only when every model is offline.
    """

    def __init__(self, default: Model, agents: Mapping[str, Model] | None = None) -> None:
        self.default = default
        self.agents: dict[str, Model] = dict(agents or {})
        self.name = default.name
        self.offline = default.offline and all(m.offline for m in self.agents.values())

    def for_agent(self, agent_name: str) -> Model:
        """The model that answers ``agent_name``'s requests."""
        return self.agents.get(agent_name, self.default)

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        async for response in self.for_agent(request.agent_name).generate(request):
            yield response
