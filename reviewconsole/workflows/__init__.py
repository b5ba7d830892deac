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

from .checks_before_decision import DecisionAttempt, DecisionCheck, reason_required_above

__all__ = [
    "ARRIVAL_POLICIES",
    "DECISIONS",
    "DEFAULT_ROUTE",
    "START",
    "ApprovalPolicy",
    "BaseNode",
    "BaseTool",
    "Compaction",
    "Content",
    "Context",
    "DecisionAttempt",
    "DecisionCheck",
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
    "reason_required_above",
    "reload",
    "request_input_tool",
]


ARRIVAL_POLICIES = ("reject", "queue", "supersede")
"""What ``WorkflowSpec.on_arrival`` may say (see ``reviewconsole/workflow_sessions/arrivals.py``)."""


class UnknownWorkflowError(LookupError):
    """No workflow is registered under that name."""


DECISIONS = ("approve", "reject")
"""What a policy may decide by itself (``ApprovalPolicy.decide``)."""


@dataclass(frozen=True, kw_only=True)
class ApprovalPolicy:
    """A rule for a tool's approval requests (a tool confirmation, ``adk_request_confirmation``,
    or a long-running tool's call such as ``ask_for_approval``), declared in ``WorkflowSpec.policies``.

    ``name``: the rule's name, unique within its workflow (a slug; an admin's rule of the same name
    replaces it, ``reviewconsole/policies``). ``tool``: the tool's name (``"*"``: every tool).
    ``when``: a CEL condition over ``args`` (the call's arguments) and ``state`` (the session's
    state), e.g. ``"args.amount <= 100"`` (``"true"``: always; ``workflows/conditions.py``).
    ``decide``: when the condition holds, the decision the policy takes itself (``"approve"``: no
    person needed; ``"reject"``: the call never runs) with ``reason`` recorded as a person's
    reason would be; ``None``: a person decides, in ``queue`` (a queue slug; ``""``: the
    workflow's). ``four_eyes_over``: a CEL condition under which two different people must
    approve (``None``: one). ``shadow``: the rule decides nothing; it records what it would have
    decided beside the person's decision (the admin shows how often they agreed).

    Rules are tried in order; the first whose ``when`` holds governs the request.
    """

    name: str
    tool: str = "*"
    when: str = "true"
    decide: str | None = None
    reason: str = ""
    four_eyes_over: str | None = None
    queue: str = ""
    shadow: bool = False


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

    ``before_decision``: checks run before a decision is accepted, in every door (a tuple of
    ``(DecisionAttempt) -> str | None``; a string refuses, ``400 decision_refused``; see
    :mod:`.checks_before_decision`). ``on_arrival``: what happens to input that arrives for a
    session that is still open (a webhook with the same thread key, an API start with the same
    ``correlation_key``, an AG-UI message on a thread waiting on a review): ``"reject"`` (409
    ``session_waiting``, the default), ``"queue"`` (kept, started in order once the session ends)
    or ``"supersede"`` (the open session is cancelled, its items superseded, and the input starts
    the next one); see ``reviewconsole/workflow_sessions/arrivals.py``.
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
    policies: tuple[ApprovalPolicy, ...] = ()
    """Approval policies of its tools (:class:`ApprovalPolicy`), tried in order; admins add or
    replace rules by name in the admin (``reviewconsole/policies``)."""
    before_decision: tuple[DecisionCheck, ...] = ()
    """Checks run before a decision is accepted (see the class docstring)."""
    on_arrival: str = "reject"
    """``reject``, ``queue`` or ``supersede``: input arriving while a session of the same key is open."""
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
