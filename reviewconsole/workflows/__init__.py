"""The public module for workflow authors, and the registry of workflows the console hosts.

An author writes a module with a module-level list ``WORKFLOWS`` of :class:`WorkflowSpec` and
names it in ``settings.REVIEWCONSOLE["WORKFLOWS"]`` (or ``$REVIEWCONSOLE_WORKFLOWS``, a
comma-separated list that replaces the default one), or in an entry point of the group
``reviewconsole.workflows`` of an installed distribution (see :mod:`.registry`). Everything such a
module needs is importable from here: :class:`WorkflowSpec` and the engine's building blocks
(``Workflow``, ``node``, ``LlmAgent``, ``RequestInput``, ``Context``, ``Event``, tools, models).

Webhook endpoints, the inbox, the admin, the API and the AG-UI endpoint find workflows with
:func:`get` and :func:`all_specs`. The registry is loaded on first use and kept; :func:`reload`
drops it (a change of ``settings.REVIEWCONSOLE`` does too). This package imports only the engine,
never Django at import time, so scripts and engine-only tests can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import (
    DEFAULT_ROUTE,
    START,
    BaseNode,
    BaseTool,
    Compaction,
    Content,
    Context,
    Edge,
    Event,
    FunctionCall,
    FunctionNode,
    FunctionResponse,
    FunctionTool,
    GraphError,
    HandoffGroup,
    InterruptKind,
    JoinNode,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    LongRunningFunctionTool,
    Model,
    NodeTool,
    OfflineModel,
    ParallelWorker,
    Part,
    RequestInput,
    RetryConfig,
    ScriptedModel,
    State,
    ToolContext,
    Workflow,
    node,
    request_input_tool,
)

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "BaseNode",
    "BaseTool",
    "Compaction",
    "Content",
    "Context",
    "Edge",
    "Event",
    "FunctionCall",
    "FunctionNode",
    "FunctionResponse",
    "FunctionTool",
    "GraphError",
    "HandoffGroup",
    "InterruptKind",
    "JoinNode",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LongRunningFunctionTool",
    "Model",
    "NodeTool",
    "OfflineModel",
    "ParallelWorker",
    "Part",
    "RequestInput",
    "RetryConfig",
    "ScriptedModel",
    "State",
    "ToolContext",
    "UnknownWorkflowError",
    "Workflow",
    "WorkflowSpec",
    "all_specs",
    "get",
    "module_of",
    "node",
    "reload",
    "request_input_tool",
]


class UnknownWorkflowError(LookupError):
    """No workflow is registered under that name."""


@dataclass(frozen=True, kw_only=True)
class WorkflowSpec:
    """A registered workflow (keywords only).

    ``name`` is its URL-safe name (a slug: letters, digits, ``-`` and ``_``; up to 100
    characters), unique across every registered module; ``title`` is what people read.
    ``build(model)`` returns the root node; ``input_schema`` (a pydantic model or a JSON Schema
    dict) describes its starting input (webhooks, the API, the start form); ``queue`` is the slug of
    the queue its interrupts go to unless an interrupt names another in its metadata;
    ``kind`` picks the inbox's detail view (``""``: the generic one, message and payload as
    text); ``offline_policies`` drive the offline model per agent name.

    Inbox settings (an interrupt's own ``metadata`` overrides each): ``due_in_seconds`` (None:
    never due), ``on_expiry`` (``""`` stay overdue, ``"escalate"`` to ``escalate_to``, or
    ``"timeout"``: resume with a timeout payload, see ``reviewconsole/inbox/items/expiry.py``),
    ``escalate_queues`` (slugs of further queues a reviewer may escalate an item to, besides
    ``escalate_to``; see ``reviewconsole/inbox/items/lifecycle.py``), and ``bulk_approve``
    (reviewers may approve several of its items at once).

    ``chat``: a conversation that, after a reply that does not end it, waits for the user's next
    chat message (no interrupt, nothing in the inbox). Only an AG-UI client sends one, so the
    demo makes no webhook endpoint for it: a webhook cannot carry the conversation on.
    """

    name: str
    title: str
    queue: str
    build: Callable[[Model | None], BaseNode]
    input_schema: Any = None
    kind: str = ""
    description: str = ""
    offline_policies: dict[str, Callable[..., Any]] = field(default_factory=dict)
    previous: tuple[Callable[[Model | None], BaseNode], ...] = ()
    """Builders of earlier versions (root ``version`` differs) whose paused sessions still resume."""
    due_in_seconds: float | None = None
    on_expiry: str = ""
    escalate_to: str = ""
    escalate_queues: tuple[str, ...] = ()
    bulk_approve: bool = False
    chat: bool = False
    model: str = "default"
    """The name in ``REVIEWCONSOLE["MODELS"]`` of the model its agents use (``default``: ``REVIEWCONSOLE["MODEL"]``)."""
    agent_models: dict[str, str] = field(default_factory=dict)
    """Agent name → the name in ``MODELS`` of the model that agent uses instead."""
    builtin: bool = False
    """Registered by the console itself (the review request, ``review.py``) and started by its own
    door only: not offered by the start form, the sessions API or webhooks."""


def get(name: str) -> WorkflowSpec:
    """The workflow registered as ``name``.

    Raises:
        UnknownWorkflowError: nothing is registered under that name.
    """
    try:
        return _registry.current().specs[name]
    except KeyError:
        raise UnknownWorkflowError(f"No workflow named {name!r} is registered.") from None


def all_specs(*, builtin: bool = False) -> list[WorkflowSpec]:
    """Every workflow registered by a module of the settings or an entry point, by name; with
    ``builtin``, the console's own too (the review request, ``review.py``: :func:`get` finds it
    either way; listings, admin choices and the demo leave it out)."""
    specs = _registry.current().specs
    return [specs[name] for name in sorted(specs) if builtin or not specs[name].builtin]


def module_of(name: str) -> str:
    """The dotted path of the module that registered the workflow ``name``.

    Raises:
        UnknownWorkflowError: nothing is registered under that name.
    """
    try:
        return _registry.current().modules[name]
    except KeyError:
        raise UnknownWorkflowError(f"No workflow named {name!r} is registered.") from None


def reload() -> None:
    """Forget the loaded registry: the next :func:`get` reads the settings and entry points again."""
    _registry.forget()


# Last: the registry module needs WorkflowSpec, defined above.
from . import registry as _registry  # noqa: E402
