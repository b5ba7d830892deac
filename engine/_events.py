"""The event model, in ADK's session JSON form.

Every event the engine produces or stores is an :class:`Event`. Field names are snake_case in
Python and camelCase on the wire (``Event.to_json()`` / ``Event.from_json()``), following
``google.adk.events.Event`` (ADK 2.x) so that stored sessions read like ADK's own traces:
``id``, ``invocationId``, ``author``, ``branch``, ``timestamp`` (seconds since the epoch, float),
``content.parts[]`` (``text`` / ``inlineData`` / ``functionCall`` / ``functionResponse``), ``actions``
(``stateDelta``, ``route``, ``requestedToolConfirmations``, ``skipSummarization``),
``longRunningToolIds``, ``nodeInfo`` (``path``, ``outputFor``, ``messageAsOutput``), ``output``
and ``isolationScope``.

A function node may also build an event with ADK's shorthand keywords:
``Event(message="text", state={"k": v}, route="approved", output=value)``.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "Blob",
    "Content",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionResponse",
    "NodeInfo",
    "Part",
    "new_id",
]

REQUEST_INPUT_FUNCTION = "adk_request_input"
"""Function-call name of an interrupt raised by ``RequestInput`` or the ``request_input`` tool."""
REQUEST_CONFIRMATION_FUNCTION = "adk_request_confirmation"
"""Function-call name of a tool-confirmation interrupt."""


_IDS_PER_READ = 64
_ids: Iterator[str] = iter(())
"""Ids not handed out yet from the last read of the OS's random source."""


def new_id() -> str:
    """A fresh random id: 32 hex characters (128 random bits from ``os.urandom``, as a uuid4 has 122).

    The random bytes are read 64 ids at a time (one system call, not one per id: a node run
    makes several ids). ``next`` on the batch is atomic, so threads never share an id; a batch
    two threads refill at once is simply dropped by one of them. A forked child starts a batch of
    its own (it must not repeat its parent's ids).
    """
    global _ids
    found = next(_ids, None)
    if found is None:
        raw = os.urandom(16 * _IDS_PER_READ).hex()
        batch = iter([raw[at : at + 32] for at in range(0, len(raw), 32)])
        found = next(batch)
        _ids = batch
    return found


def _forget_ids() -> None:
    global _ids
    _ids = iter(())


os.register_at_fork(after_in_child=_forget_ids)


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        ser_json_inf_nan="constants",
    )


class FunctionCall(_Model):
    """A call of a tool (or an interrupt's ``adk_request_*`` call). ``args`` is a JSON object."""

    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FunctionResponse(_Model):
    """The response to a :class:`FunctionCall` with the same ``id``; ``response`` is a JSON object."""

    id: str | None = None
    name: str
    response: dict[str, Any] = Field(default_factory=dict)


class Blob(_Model):
    """Inline binary data of a :class:`Part` (ADK / genai ``inlineData``): ``data`` is the bytes
    as URL-safe base64 text (as genai writes them in session JSON), ``mime_type`` e.g. ``image/png``."""

    data: str
    mime_type: str | None = None
    display_name: str | None = None

    def to_bytes(self) -> bytes:
        """The decoded bytes (standard or URL-safe base64 accepted)."""
        text = self.data.replace("+", "-").replace("/", "_")
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Part(_Model):
    """One part of a :class:`Content`: exactly one of ``text``, ``inline_data`` (a :class:`Blob`),
    ``function_call``, ``function_response``."""

    text: str | None = None
    inline_data: Blob | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None

    @classmethod
    def from_text(cls, text: str) -> Part:
        """A text part (genai's ``Part.from_text``)."""
        return cls(text=text)

    @classmethod
    def from_bytes(cls, *, data: bytes, mime_type: str) -> Part:
        """An ``inlineData`` part holding ``data`` (genai's ``Part.from_bytes``)."""
        return cls(inline_data=Blob(data=base64.urlsafe_b64encode(data).decode("ascii"), mime_type=mime_type))


class Content(_Model):
    """A message: ``role`` is ``"user"`` or ``"model"``."""

    role: str | None = None
    parts: list[Part] = Field(default_factory=list)

    @classmethod
    def user_text(cls, text: str) -> Content:
        """A user message holding one text part."""
        return cls(role="user", parts=[Part(text=text)])

    @property
    def text(self) -> str:
        """The concatenated text parts ('' when there are none)."""
        return "".join([p.text for p in self.parts if p.text is not None])  # a list: no generator frame

    def function_calls(self) -> list[FunctionCall]:
        """The function-call parts, in order."""
        return [p.function_call for p in self.parts if p.function_call is not None]

    def function_responses(self) -> list[FunctionResponse]:
        """The function-response parts, in order."""
        return [p.function_response for p in self.parts if p.function_response is not None]


class EventActions(_Model):
    """Side effects an event carries: state changes, the route a node took, tool confirmations."""

    state_delta: dict[str, Any] = Field(default_factory=dict)
    route: Any = None
    requested_tool_confirmations: dict[str, Any] = Field(default_factory=dict)
    skip_summarization: bool | None = None
    transfer_to_agent: str | None = None
    rewind_before_invocation_id: str | None = None


class NodeInfo(_Model):
    """Where an event comes from: ``path`` is ``wf@1/node@2`` ('' for user input)."""

    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None


class Event(_Model):
    """One entry of a session's append-only history (ADK's ``Event``).

    Shorthand keywords accepted by the constructor (ADK 2.x, ``workflow/_base_node.py``):
    ``message`` (str, a list of :class:`Part` or a :class:`Content`: content with role ``user``),
    ``state`` (dict: merged into ``actions.state_delta``), ``route`` (str, bool, int or a list of
    them: ``actions.route``).
    """

    id: str = Field(default_factory=new_id)
    invocation_id: str = ""
    author: str = ""
    branch: str | None = None
    timestamp: float = Field(default_factory=time.time)
    content: Content | None = None
    actions: EventActions | None = None
    long_running_tool_ids: list[str] | None = None
    node_info: NodeInfo = Field(default_factory=NodeInfo)
    output: Any = None
    isolation_scope: str | None = None
    partial: bool | None = None
    error_code: str | None = None
    error_message: str | None = None
    custom_metadata: dict[str, Any] | None = None
    """Host annotations (ADK ``customMetadata``), e.g. ``{"rewindToCheckpoint": id}`` on a rewind."""

    if TYPE_CHECKING:  # the constructor as type checkers should see it, shorthand included

        def __init__(
            self,
            *,
            id: str = ...,
            invocation_id: str = "",
            author: str = "",
            branch: str | None = None,
            timestamp: float = ...,
            content: Content | None = None,
            actions: EventActions | None = None,
            long_running_tool_ids: list[str] | None = None,
            node_info: NodeInfo = ...,
            output: Any = None,
            isolation_scope: str | None = None,
            partial: bool | None = None,
            error_code: str | None = None,
            error_message: str | None = None,
            custom_metadata: dict[str, Any] | None = None,
            message: str | Content | list[Part] | None = None,
            state: dict[str, Any] | None = None,
            route: Any = None,
        ) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # Nested values are given as plain dicts where they can be: pydantic builds the models.
        if not isinstance(data, dict) or not ("message" in data or "state" in data or "route" in data):
            return data
        data = dict(data)
        message = data.pop("message", None)
        state = data.pop("state", None)
        route = data.pop("route", None)
        if isinstance(message, list):
            data["content"] = {
                "role": "user",
                "parts": [p if isinstance(p, Part) else {"text": str(p)} for p in message],
            }
        elif message is not None:
            data["content"] = (
                message if isinstance(message, Content) else {"role": "user", "parts": [{"text": str(message)}]}
            )
        if state is not None or route is not None:
            actions = data.get("actions")
            if actions is None:
                actions = {"state_delta": dict(state) if state else {}, "route": route}
            else:
                if isinstance(actions, dict):
                    actions = EventActions.model_validate(actions)
                if state:
                    actions.state_delta.update(state)
                if route is not None:
                    actions.route = route
            data["actions"] = actions
        return data

    # -- reading helpers ---------------------------------------------------------------------

    @property
    def state_delta(self) -> dict[str, Any]:
        """``actions.state_delta`` ({} when absent)."""
        return self.actions.state_delta if self.actions else {}

    @property
    def route(self) -> Any:
        """``actions.route`` (None when absent)."""
        return self.actions.route if self.actions else None

    def function_calls(self) -> list[FunctionCall]:
        """Function calls in the content, in order."""
        return self.content.function_calls() if self.content else []

    def function_responses(self) -> list[FunctionResponse]:
        """Function responses in the content, in order."""
        return self.content.function_responses() if self.content else []

    @property
    def text(self) -> str:
        """The concatenated text of the content ('' when none)."""
        return self.content.text if self.content else ""

    # -- wire form ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The event as ADK session JSON: camelCase keys, absent fields omitted."""
        data = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        actions = data.get("actions")
        if actions is not None:
            for key in [k for k, v in actions.items() if v == {}]:
                del actions[key]
            if not actions:
                del data["actions"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        """Parse ADK session JSON (camelCase or snake_case keys)."""
        return cls.model_validate(data)
