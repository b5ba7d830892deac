"""Tools an agent's model can call: function tools, long-running tools, ``request_input``.

A :class:`FunctionTool` declares itself from its function (ADK ``tools/function_tool.py``): the
name, the docstring's first paragraph as description, parameters from the signature (pydantic
models allowed) with descriptions from the docstring's ``Args:`` section. Arguments are validated
before the call; invalid ones go back to the model as ``{"error": ...}`` so it can retry.

``require_confirmation`` (True, or a predicate on the arguments) makes the engine ask a person
before the tool runs; a tool may also ask itself with ``tool_context.request_confirmation()``.
Either way a decline is enforced by the engine: the tool does not run and the model gets
``{"error": decline_message}``.

A :class:`LongRunningFunctionTool` runs at once and its return value is an interim result; the
call stays pending until its real result arrives as a function response with the same call id
(from a person or an outside system), without running the tool again.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from ._binding import type_hints
from ._context import Context
from ._errors import ConfigurationError
from ._events import REQUEST_INPUT_FUNCTION
from ._node import BaseNode
from ._state import State

__all__ = [
    "BaseTool",
    "FunctionTool",
    "LongRunningFunctionTool",
    "ToolArgumentError",
    "ToolContext",
    "request_input_tool",
]

CONFIRMATION_REQUIRED_ERROR = "This tool call requires confirmation, please approve or reject."
DECLINED_ERROR = "This tool call is rejected."
"""What the model gets for a declined call by default (ADK 2.13's framework wording, ``tools/function_tool.py``)."""
ARGS_CHANGED_ERROR = "This tool call did not run: its arguments are not the ones that were approved."
"""What the model gets when an approval's argument digest does not match the call (``engine._digest``)."""
LONG_RUNNING_NOTE = (
    "\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already "
    "returned some intermediate or pending status."
)


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool; ``errors`` lists why."""

    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = errors


class ToolContext:
    """What a tool function sees as its ``tool_context`` parameter.

    ``state`` writes travel on the tool's response event; ``turn_state`` holds the writes of the
    same model turn's earlier calls, which this call reads first. ``tool_confirmation`` is
    ``{"confirmed": bool, "payload"?: ...}`` when the call runs after an approval.
    """

    def __init__(
        self,
        ctx: Context,
        function_call_id: str,
        tool_confirmation: dict[str, Any] | None = None,
        *,
        turn_state: dict[str, Any] | None = None,
    ):
        self._ctx = ctx
        self.function_call_id = function_call_id
        self.tool_confirmation = tool_confirmation
        # The calls of one model turn see the state writes of the calls before them (call order),
        # so two calls appending to one list both keep their item (ADK merges them the same way).
        base = {**ctx.session.state, **turn_state} if turn_state else ctx.session.state
        self.state = State(base)
        self.skip_summarization = False
        self.confirmation_request: dict[str, Any] | None = None
        self.recovered = False
        """True when the call runs again because a worker died while it ran (its effect may have run)."""

    @property
    def session_id(self) -> str:
        return self._ctx.session_id

    @property
    def user_id(self) -> str:
        return self._ctx.user_id

    @property
    def invocation_id(self) -> str:
        return self._ctx.invocation_id

    @property
    def agent_name(self) -> str:
        return self._ctx.node.name

    @property
    def metadata(self) -> dict[str, Any]:
        return self._ctx.metadata

    def request_confirmation(self, *, hint: str | None = None, payload: Any = None) -> None:
        """Ask a person to approve this call; the tool runs again once they answer."""
        self.confirmation_request = {"hint": hint, "payload": payload}


class BaseTool:
    """A tool: ``name``, ``description``, a JSON Schema for its arguments, and ``call``."""

    is_long_running = False

    def __init__(self, *, name: str, description: str = "") -> None:
        self.name = name
        self.description = description

    def parameters(self) -> dict[str, Any]:
        """JSON Schema of the arguments (an object)."""
        return {"type": "object", "properties": {}}

    def declaration(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` as sent to models."""
        description = self.description + (LONG_RUNNING_NOTE if self.is_long_running else "")
        return {"name": self.name, "description": description, "parameters": self.parameters()}

    def needs_confirmation(self, args: dict[str, Any]) -> bool:
        """True when a person must approve this call before it runs."""
        return False

    async def call(self, args: dict[str, Any], tool_context: ToolContext) -> Any:
        raise NotImplementedError


def _doc_parts(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(func) or ""
    summary = doc.split("\n\n")[0].strip()
    args: dict[str, str] = {}
    match = re.search(r"^Args:\s*\n(.*?)(?:^\S|\Z)", doc, re.S | re.M)
    if match:
        current = None
        for line in match.group(1).splitlines():
            item = re.match(r"\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)", line)
            if item and (current is None or not line.startswith("        ")):
                current = item.group(1)
                args[current] = item.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
    return summary, args


def _mentions_model(annotation: Any) -> bool:
    """True when a parameter type is, or contains (``list[Model]``, ``Model | None``), a pydantic model."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in typing.get_args(annotation))


class FunctionTool(BaseTool):
    """A tool made from a plain or async function (see the module docstring).

    Args:
        func: the function; a parameter named ``tool_context`` receives a :class:`ToolContext`.
        name: defaults to the function's name.
        description: defaults to the docstring's first paragraph.
        require_confirmation: True, or a predicate on the arguments dict.
        decline_message: what the model gets when a person declines the call (default: ADK's
            ``"This tool call is rejected."``).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        require_confirmation: bool | Callable[[dict[str, Any]], bool] = False,
        decline_message: str | None = None,
    ) -> None:
        summary, arg_docs = _doc_parts(func)
        super().__init__(name=name or func.__name__, description=description if description is not None else summary)
        self.func = func
        self.require_confirmation = require_confirmation
        self.decline_message = decline_message or DECLINED_ERROR
        hints = type_hints(func)
        fields: dict[str, Any] = {}
        self._takes_context = False
        self._model_params: set[str] = set()
        for param in inspect.signature(func).parameters.values():
            annotation = hints.get(param.name, Any)
            if param.name == "tool_context" or annotation is ToolContext:
                self._takes_context = True
                continue
            if param.name in ("ctx", "node_input") or (
                isinstance(annotation, type) and issubclass(annotation, Context)
            ):
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
            if _mentions_model(annotation):
                self._model_params.add(param.name)
        self._args_model: type[BaseModel] = create_model(f"{self.name}_args", **fields)
        self._schema = self._args_model.model_json_schema()
        self._schema.pop("title", None)

    def parameters(self) -> dict[str, Any]:
        return self._schema

    def needs_confirmation(self, args: dict[str, Any]) -> bool:
        required = self.require_confirmation
        return bool(required(args)) if callable(required) else bool(required)

    def validate_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """Coerce the model's arguments; raise :class:`ToolArgumentError` when they do not fit."""
        try:
            model = self._args_model.model_validate(args)
        except ValidationError as exc:
            errors = [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
            detail = "; ".join(f"{'.'.join(map(str, e['path'])) or 'args'}: {e['message']}" for e in errors)
            raise ToolArgumentError(f"Invalid arguments for {self.name}: {detail}", errors) from exc
        return {name: getattr(model, name) for name in type(model).model_fields}

    def call_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for a call: validated, then passed as the model sent them.

        ADK 2.13 (``tools/function_tool.py``) passes the model's values as they are (a ``50`` for
        a ``float`` parameter stays ``50``) and builds only pydantic-model parameters (also in
        lists and dicts) from their JSON; defaults fill what the model left out. A value that
        differs from its coerced form (the text ``"2.5"`` for a ``float``) is passed coerced,
        where ADK would pass the text.

        Raises:
            ToolArgumentError: the arguments do not fit the signature.
        """
        validated = self.validate_args(args)
        return {
            name: args[name] if name in args and name not in self._model_params and args[name] == value else value
            for name, value in validated.items()
        }

    async def call(self, args: dict[str, Any], tool_context: ToolContext) -> Any:
        kwargs = self.call_args(args)
        if self._takes_context:
            kwargs["tool_context"] = tool_context
        result = self.func(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


class LongRunningFunctionTool(FunctionTool):
    """A function tool whose return value is interim; the real result comes later (see module)."""

    is_long_running = True


class _RequestInputTool(BaseTool):
    """The built-in ``request_input`` tool: the model asks the user for (structured) input."""

    is_long_running = True

    def __init__(self) -> None:
        super().__init__(
            name=REQUEST_INPUT_FUNCTION,
            description="Ask the user for input. Use response_schema (a JSON Schema) to ask for structured data.",
        )

    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "The question for the user."},
                "response_schema": {"type": "object", "description": "JSON Schema of the expected answer."},
            },
            "required": ["message"],
        }

    def declaration(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters()}


request_input_tool = _RequestInputTool()
"""Add to an agent's ``tools`` to let its model ask the user (ADK ``tools/_request_input_tool.py``)."""


def as_tool(value: Any) -> Any:
    """A tool from a tool, a node (becomes a NodeTool) or a function (becomes a FunctionTool).

    Raises:
        ConfigurationError: the value is an agent (agents are handed off to, not called as tools).
    """

    if isinstance(value, BaseTool):
        return value
    if isinstance(value, BaseNode):
        from ._agent import LlmAgent  # a cycle: _agent imports (through _agent_run, _node_tool) this module
        from ._node_tool import NodeTool  # a cycle: _node_tool imports this module

        if isinstance(value, LlmAgent):
            raise ConfigurationError(
                f"Agent {value.name} cannot be a tool: an agent runs as a node of a workflow or as a handoff target."
            )
        return NodeTool(value)
    if callable(value):
        return FunctionTool(value)
    raise ConfigurationError(f"{value!r} is not a tool.")
