"""reviewconsole's workflow engine: graphs of nodes, agents and tools with humans in the loop.

Pure Python (no Django). See ``docs/engine.md`` for a walk-through: define a workflow, run it,
pause on a :class:`RequestInput`, resume it with an answer.
"""

from ._agent import LlmAgent, render_instruction
from ._auth import AuthConfig, AuthCredential
from ._compaction import Compaction
from ._context import Context, Outcome
from ._digest import args_digest
from ._errors import (
    AlreadyDecidedError,
    AmbiguousAnswerError,
    AnswerInvalidError,
    AnswerMissingError,
    ArgsChangedError,
    CheckpointDecidedError,
    ConcurrencyError,
    ConfigurationError,
    EngineError,
    GraphError,
    InterruptNotReadyError,
    ModelError,
    NodeFailedError,
    NodeTimeoutError,
    SessionBusyError,
    SessionClosedError,
    SessionNotFailedError,
    SessionNotFoundError,
    StuckSessionError,
    UnknownCheckpointError,
    UnknownInterruptError,
    VersionMismatchError,
    WorkflowDataError,
)
from ._events import Blob, Content, Event, EventActions, FunctionCall, FunctionResponse, NodeInfo, Part
from ._formats import FORMAT_CHECKER
from ._graph import DEFAULT_ROUTE, START, Edge
from ._handoff import HandoffGroup
from ._interrupts import InterruptKind, RequestInput, cancelled_answer, is_cancelled_answer, normalize_answer
from ._join import JoinNode
from ._leaf import EFFECT_MAY_HAVE_RUN
from ._listener import Listener, NodeStatus, RunListener
from ._memory_store import InMemoryStore
from ._model_retry import ModelRetry, ModelRouter, RetryingModel
from ._models import LlmRequest, LlmResponse, Model, OfflineModel, ScriptedModel
from ._node import BaseNode, FunctionNode, RetryConfig, node
from ._node_tool import NodeTool
from ._parallel import ParallelWorker
from ._retry import RETRY_KEY
from ._runner import InterruptsPendingError, Runner, RunResult
from ._state import State, split_delta
from ._store import (
    Answer,
    AnswerGuard,
    Commit,
    Decision,
    InterruptRecord,
    RunLoad,
    SessionRecord,
    SessionStatus,
    Store,
    StoredAnswer,
    awaits_message,
    rewind_event,
)
from ._tools import BaseTool, FunctionTool, LongRunningFunctionTool, ToolContext, request_input_tool
from ._workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "EFFECT_MAY_HAVE_RUN",
    "FORMAT_CHECKER",
    "RETRY_KEY",
    "START",
    "AlreadyDecidedError",
    "AmbiguousAnswerError",
    "Answer",
    "AnswerGuard",
    "AnswerInvalidError",
    "AnswerMissingError",
    "ArgsChangedError",
    "AuthConfig",
    "AuthCredential",
    "BaseNode",
    "BaseTool",
    "Blob",
    "CheckpointDecidedError",
    "Commit",
    "Compaction",
    "ConcurrencyError",
    "ConfigurationError",
    "Content",
    "Context",
    "Decision",
    "Edge",
    "EngineError",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionNode",
    "FunctionResponse",
    "FunctionTool",
    "GraphError",
    "HandoffGroup",
    "InMemoryStore",
    "InterruptKind",
    "InterruptNotReadyError",
    "InterruptRecord",
    "InterruptsPendingError",
    "JoinNode",
    "Listener",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LongRunningFunctionTool",
    "Model",
    "ModelError",
    "ModelRetry",
    "ModelRouter",
    "NodeFailedError",
    "NodeInfo",
    "NodeStatus",
    "NodeTimeoutError",
    "NodeTool",
    "OfflineModel",
    "Outcome",
    "ParallelWorker",
    "Part",
    "RequestInput",
    "RetryConfig",
    "RetryingModel",
    "RunListener",
    "RunLoad",
    "RunResult",
    "Runner",
    "ScriptedModel",
    "SessionBusyError",
    "SessionClosedError",
    "SessionNotFailedError",
    "SessionNotFoundError",
    "SessionRecord",
    "SessionStatus",
    "State",
    "Store",
    "StoredAnswer",
    "StuckSessionError",
    "ToolContext",
    "UnknownCheckpointError",
    "UnknownInterruptError",
    "VersionMismatchError",
    "Workflow",
    "WorkflowDataError",
    "args_digest",
    "awaits_message",
    "cancelled_answer",
    "is_cancelled_answer",
    "node",
    "normalize_answer",
    "render_instruction",
    "request_input_tool",
    "rewind_event",
    "split_delta",
]
