"""An OpenAI-compatible chat-completions backend: OpenAI itself, or a local llama.cpp, Ollama or vLLM.

``OpenAIModel(base_url, api_key, model)`` implements :class:`engine.Model` over
``POST {base_url}/chat/completions`` with the ``openai`` package. It sends the agent's
instruction as a system message, the conversation as chat messages, the tools as function tools,
and an output schema as a ``json_schema`` response format. With ``stream=True`` (the default) the
reply is streamed: text deltas are yielded as partial responses as they arrive, tool-call
fragments are put together, and one complete response follows.

Conversation mapping (engine → chat messages):

- a user text part → a ``user`` message; a model turn → an ``assistant`` message with its text and
  ``tool_calls`` (arguments as JSON text);
- function responses → ``tool`` messages placed right after the assistant message that made the
  calls, as the API requires. A call whose result has not come yet (a long-running tool, a node
  tool waiting on a person) gets ``{"status": "pending"}``; a later result on the same call id
  (a long-running tool's update) comes as a ``user`` message naming the call.

Errors from the server or the network raise :class:`~engine.ModelError` whose ``details`` hold
``kind`` (``connection``, ``timeout``, ``rate_limited`` for 429, ``server_error`` for 5xx,
``refused`` for other statuses), ``status_code`` when the server answered, and ``retry_after``
(seconds) when it sent ``Retry-After`` or ``retry-after-ms``. The message names the status, never
the server's body (which may echo what it was sent) nor the key; the ``openai`` exception is not
chained. Wrap the model in :class:`~engine.RetryingModel` to retry transient failures (the
``openai`` client's own retries are off by default: ``max_retries=0``).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import re
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai

from ._errors import ModelError
from ._events import Content, FunctionCall, Part
from ._models import LlmRequest, LlmResponse

__all__ = ["OpenAIModel", "redact_url", "to_messages"]

_USERINFO = re.compile(r"//.*@")


def redact_url(url: str) -> str:
    """``url`` with its userinfo (``user:password@``, RFC 3986 §3.2.1) shown as ``***@``, for messages.

    Everything from ``//`` to the last ``@`` goes, so an unencoded ``/`` or ``@`` in a password
    cannot leave part of it behind (more is hidden rather than less).
    """
    return _USERINFO.sub("//***@", url, count=1)


PENDING_RESULT = {"status": "pending"}
"""What the model sees for a call whose result has not come yet."""


class OpenAIModel:
    """A :class:`~engine.Model` over an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        base_url: the API root, e.g. ``https://api.openai.com/v1`` or
            ``http://127.0.0.1:8080/v1`` (None: the ``openai`` package's default).
        api_key: the bearer key (None: ``OPENAI_API_KEY``, or a placeholder for local servers
            that need none).
        model: the model name sent with each request; also this backend's ``name``.
        stream: stream replies (text deltas become partial responses).
        temperature: sampling temperature (None: the server's default).
        timeout: seconds per request.
        max_retries: retries of failed requests by the ``openai`` client itself (0: leave retries
            to :class:`~engine.RetryingModel`, whose delays are configurable).
        response_format: send ``output_schema`` as a ``json_schema`` response format (turn off
            for servers that reject it; the schema is then only described in the instruction).
        api_key_env: the environment variable the key came from, named by the error of a 401 or
            403 answer (None: ``OPENAI_API_KEY`` when ``api_key`` is None; "": no key was sent).
    """

    offline = False

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str = "gpt-4o-mini",
        *,
        stream: bool = True,
        temperature: float | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        response_format: bool = True,
        api_key_env: str | None = None,
    ) -> None:
        self.name = model
        self.model = model
        self.stream = stream
        self.temperature = temperature
        self.response_format = response_format
        self.base_url = base_url
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.api_key_env = api_key_env if api_key_env is not None else ("" if api_key else "OPENAI_API_KEY")
        self.timeout = timeout
        self.max_retries = max_retries
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The ``openai`` client of the running event loop (its connections belong to that loop:
        hosts that run each session in a loop of its own, as ``async_to_sync`` does, get one each)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=self.max_retries
            )
        return client

    def _body(self, request: LlmRequest) -> dict[str, Any]:
        instruction = request.instruction
        body: dict[str, Any] = {"model": self.model}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                    },
                }
                for t in request.tools
            ]
        if request.output_schema is not None:
            if self.response_format:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "output", "schema": request.output_schema},
                }
            instruction = (
                f"{instruction}\n\nReply with JSON only, matching this JSON Schema:\n"
                f"{json.dumps(request.output_schema)}"
            ).strip()
        body["messages"] = to_messages(instruction, request.contents)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        """Call the endpoint once; yield text deltas (when streaming) and then the full reply.

        Raises:
            ModelError: the server refused the request, or could not be reached.
        """
        body = self._body(request)
        try:
            if self.stream:
                async for response in self._streamed(body):
                    yield response
            else:
                completion = await self.client.chat.completions.create(**body)
                if not completion.choices:
                    raise ModelError(f"Model {self.model} returned no choices.")
                message = completion.choices[0].message
                calls = [
                    (c.id, c.function.name, c.function.arguments)
                    for c in (message.tool_calls or [])
                    if getattr(c, "function", None) is not None
                ]
                yield LlmResponse(_content(message.content or "", calls))
        except openai.APIStatusError as exc:
            raise _status_error(self.model, exc, self.api_key_env) from None
        except openai.APITimeoutError:
            raise ModelError(f"Model {self.model}: the server did not answer in time.", kind="timeout") from None
        except openai.APIConnectionError:
            raise ModelError(f"Model {self.model}: the server could not be reached.", kind="connection") from None
        except httpx.TimeoutException:
            raise ModelError(f"Model {self.model}: the server did not answer in time.", kind="timeout") from None
        except httpx.TransportError:
            raise ModelError(f"Model {self.model}: the connection broke off.", kind="connection") from None
        except openai.APIError as exc:
            raise ModelError(f"Model {self.model}: the reply could not be read ({type(exc).__name__}).") from None

    def __repr__(self) -> str:
        base_url = None if self.base_url is None else redact_url(self.base_url)
        return f"OpenAIModel(base_url={base_url!r}, model={self.model!r})"

    async def _streamed(self, body: dict[str, Any]) -> AsyncIterator[LlmResponse]:
        text: list[str] = []
        calls: dict[int, list[str]] = {}  # index → [id, name, arguments]
        stream = await self.client.chat.completions.create(**body, stream=True)
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
                yield LlmResponse(Content(role="model", parts=[Part(text=delta.content)]), partial=True)
            for fragment in delta.tool_calls or []:
                slot = calls.setdefault(fragment.index, ["", "", ""])
                if fragment.id:
                    slot[0] = fragment.id
                if fragment.function is not None:
                    slot[1] += fragment.function.name or ""
                    slot[2] += fragment.function.arguments or ""
        yield LlmResponse(_content("".join(text), [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]))


def _status_error(model: str, exc: openai.APIStatusError, api_key_env: str = "") -> ModelError:
    """The :class:`ModelError` of an HTTP error answer; a 401 or 403 names the key's variable."""
    status = exc.status_code
    if status == 429:
        kind = "rate_limited"
    elif status >= 500 or status in (408, 409):
        kind = "server_error"
    else:
        kind = "refused"
    details: dict[str, Any] = {"kind": kind, "status_code": status}
    retry_after = _retry_after(exc.response.headers)
    if retry_after is not None:
        details["retry_after"] = retry_after
    message = f"Model {model}: the server answered {status}."
    if status in (401, 403):
        where = (
            f"the environment variable {api_key_env} (named by API_KEY_ENV)"
            if api_key_env
            else "API_KEY_ENV (no key was sent: set it to the environment variable holding the key)"
        )
        message = f"Model {model}: the server answered {status}: check the API key, {where}."
    return ModelError(message, **details)


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _content(text: str, calls: list[tuple[str | None, str, str]]) -> Content:
    parts: list[Part] = [Part(text=text)] if text else []
    for call_id, name, arguments in calls:
        parts.append(Part(function_call=FunctionCall(id=call_id or None, name=name, args=_arguments(arguments))))
    return Content(role="model", parts=parts)


def _arguments(raw: str) -> dict[str, Any]:
    """Parse a tool call's JSON arguments; unparseable text is passed on so the tool refuses it."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_unparsed_arguments": raw}


def to_messages(instruction: str, contents: list[Content]) -> list[dict[str, Any]]:
    """The chat messages for ``instruction`` and ``contents`` (see the module docstring)."""
    messages: list[dict[str, Any]] = []
    if instruction:
        messages.append({"role": "system", "content": instruction})
    first_response: dict[str, Any] = {}
    for content in contents:
        for response in content.function_responses():
            if response.id and response.id not in first_response:
                first_response[response.id] = response
    answered: set[str] = set()
    for content in contents:
        calls = content.function_calls()
        if content.role == "model":
            message: dict[str, Any] = {"role": "assistant", "content": content.text or None}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": call.id or f"call_{i}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
                    }
                    for i, call in enumerate(calls)
                ]
            messages.append(message)
            for i, call in enumerate(calls):
                call_id = call.id or f"call_{i}"
                found = first_response.get(call_id)
                result = found.response if found is not None else PENDING_RESULT
                if found is not None:
                    answered.add(call_id)
                messages.append(
                    {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, ensure_ascii=False)}
                )
            continue
        for response in content.function_responses():
            if response.id in answered and first_response.get(response.id or "") is response:
                continue  # already sent right after its call
            messages.append(
                {
                    "role": "user",
                    "content": f"Result of the tool call {response.name} ({response.id}): "
                    + json.dumps(response.response, ensure_ascii=False),
                }
            )
        if content.text:
            messages.append({"role": "user", "content": content.text})
    return messages
