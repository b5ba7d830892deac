"""reviewconsole's workflow engine: graphs of nodes, agents and tools with humans in the loop.

Pure Python (no Django). See ``docs/engine.md`` for a walk-through: define a workflow, run it,
pause on a :class:`RequestInput`, resume it with an answer.
"""

from ._context import Context, Outcome
from ._errors import (
    AlreadyDecidedError,
    AmbiguousAnswerError,
    AnswerInvalidError,
    ConcurrencyError,
    ConfigurationError,
    EngineError,
    GraphError,
    ModelError,
    NodeFailedError,
    NodeTimeoutError,
    SessionBusyError,
    SessionClosedError,
    SessionNotFoundError,
    UnknownInterruptError,
    VersionMismatchError,
    WorkflowDataError,
)
from ._events import Content, Event, EventActions, FunctionCall, FunctionResponse, NodeInfo, Part
from ._graph import DEFAULT_ROUTE, START, Edge
from ._interrupts import InterruptKind, RequestInput
from ._node import BaseNode, FunctionNode, RetryConfig, node
from ._runner import InterruptsPendingError, Runner, RunResult
from ._state import State
from ._store import Answer, Commit, Delivery, InMemoryStore, InterruptRecord, SessionRecord, SessionStatus, Store
from ._workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "AlreadyDecidedError",
    "AmbiguousAnswerError",
    "Answer",
    "AnswerInvalidError",
    "BaseNode",
    "Commit",
    "ConcurrencyError",
    "ConfigurationError",
    "Content",
    "Context",
    "Delivery",
    "Edge",
    "EngineError",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionNode",
    "FunctionResponse",
    "GraphError",
    "InMemoryStore",
    "InterruptKind",
    "InterruptRecord",
    "InterruptsPendingError",
    "ModelError",
    "NodeFailedError",
    "NodeInfo",
    "NodeTimeoutError",
    "Outcome",
    "Part",
    "RequestInput",
    "RetryConfig",
    "RunResult",
    "Runner",
    "SessionBusyError",
    "SessionClosedError",
    "SessionNotFoundError",
    "SessionRecord",
    "SessionStatus",
    "State",
    "Store",
    "UnknownInterruptError",
    "VersionMismatchError",
    "Workflow",
    "WorkflowDataError",
    "node",
]
