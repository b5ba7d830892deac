"""Errors the engine raises. Each carries a stable ``code`` that callers may match on.

| code | class | raised when |
|---|---|---|
| ``graph_invalid`` | :class:`GraphError` | a workflow's edges are invalid (at construction) |
| ``config_invalid`` | :class:`ConfigurationError` | a node, agent or tool is misconfigured |
| ``data_invalid`` | :class:`WorkflowDataError` | a node's input, output or state fails its schema or binding |
| ``answer_invalid`` | :class:`AnswerInvalidError` | an answer to an interrupt fails its ``response_schema`` |
| ``answer_missing`` | :class:`AnswerMissingError` | a free-text answer is empty (``None``, blank text) |
| ``interrupt_unknown`` | :class:`UnknownInterruptError` | an answer names no pending interrupt |
| ``interrupt_ambiguous`` | :class:`AmbiguousAnswerError` | an answer names no id while several are pending |
| ``interrupt_decided`` | :class:`AlreadyDecidedError` | an interrupt was already answered (first answer wins) |
| ``interrupt_not_ready`` | :class:`InterruptNotReadyError` | an answer came while its run goes on (retryable) |
| ``args_changed`` | :class:`ArgsChangedError` | an approval names another argument digest than its call's |
| ``session_not_found`` | :class:`SessionNotFoundError` | no session with that id |
| ``checkpoint_unknown`` | :class:`UnknownCheckpointError` | no pause checkpoint with that id in that session |
| ``checkpoint_decided`` | :class:`CheckpointDecidedError` | a rewind would reopen an interrupt someone else decided |
| ``session_busy`` | :class:`SessionBusyError` | another run holds the session's lease (retryable) |
| ``session_conflict`` | :class:`ConcurrencyError` | the session changed under a writer (retryable) |
| ``session_closed`` | :class:`SessionClosedError` | the session is completed, failed or cancelled |
| ``session_stuck`` | :class:`StuckSessionError` | a commit would leave a session waiting with nothing to resume it |
| ``session_not_failed`` | :class:`SessionNotFailedError` | a retry of a session that has not failed |
| ``version_mismatch`` | :class:`VersionMismatchError` | a session paused under another workflow version |
| ``node_timeout`` | :class:`NodeTimeoutError` | a node ran longer than its ``timeout`` (seconds) |
| ``node_failed`` | :class:`NodeFailedError` | a node raised; the session fails |
| ``model_error`` | :class:`ModelError` | a model backend failed (``details["kind"]``: see :mod:`engine._model_retry`) |
"""

from __future__ import annotations

import datetime
from typing import Any

__all__ = [
    "AlreadyDecidedError",
    "AmbiguousAnswerError",
    "AnswerInvalidError",
    "AnswerMissingError",
    "CheckpointDecidedError",
    "ConcurrencyError",
    "ConfigurationError",
    "EngineError",
    "GraphError",
    "InterruptNotReadyError",
    "ModelError",
    "NodeFailedError",
    "NodeTimeoutError",
    "SessionBusyError",
    "SessionClosedError",
    "SessionNotFailedError",
    "SessionNotFoundError",
    "StuckSessionError",
    "UnknownCheckpointError",
    "UnknownInterruptError",
    "VersionMismatchError",
    "WorkflowDataError",
]


class EngineError(Exception):
    """Base class: ``code`` is stable, ``details`` is JSON-serialisable extra information."""

    code = "engine_error"
    retryable = False

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message", **details}`` for error responses."""
        return {"code": self.code, "message": self.message, **self.details}


class GraphError(EngineError, ValueError):
    code = "graph_invalid"


class ConfigurationError(EngineError, ValueError):
    code = "config_invalid"


class WorkflowDataError(EngineError, ValueError):
    code = "data_invalid"


class AnswerInvalidError(EngineError, ValueError):
    """``details["errors"]`` lists ``{"path": [...], "message": str}`` validation errors."""

    code = "answer_invalid"


class AnswerMissingError(AnswerInvalidError):
    """A free-text interrupt (no ``response_schema``) answered with nothing: ``None`` (JSON
    ``null``, also ``{"result": null}``) or blank text. Refused instead of resuming with "None"."""

    code = "answer_missing"


class UnknownInterruptError(EngineError, LookupError):
    """``details["pending"]`` lists the ids that are pending."""

    code = "interrupt_unknown"


class AmbiguousAnswerError(EngineError, ValueError):
    """``details["pending"]`` lists the ids that are pending."""

    code = "interrupt_ambiguous"


class InterruptNotReadyError(EngineError, LookupError):
    """An answer names no pending interrupt while the session is running (retryable).

    The run may be about to commit the pause that opens it: retry after a moment. ``details``
    holds ``interrupt_id`` and ``pending`` (the ids pending now).
    """

    code = "interrupt_not_ready"
    retryable = True


class ArgsChangedError(EngineError):
    """An approval names a digest other than the one its tool call was shown with
    (:mod:`engine._digest`); ``details``: ``expected`` and ``given``. Nothing is stored."""

    code = "args_changed"


class AlreadyDecidedError(EngineError):
    """``details`` holds ``interrupt_id``, ``decided_by`` and ``decided_at`` (ISO 8601)."""

    code = "interrupt_decided"

    @classmethod
    def for_interrupt(
        cls, interrupt_id: str, status: str, decided_by: str | None, decided_at: float | None
    ) -> AlreadyDecidedError:
        """The error for an interrupt no longer pending; ``decided_at`` in seconds since the epoch."""
        when = (
            datetime.datetime.fromtimestamp(decided_at, tz=datetime.UTC).isoformat() if decided_at is not None else None
        )
        return cls(
            f"Interrupt {interrupt_id} was already {status}"
            + (f" by {decided_by}" if decided_by else "")
            + (f" at {when}" if when else "")
            + ".",
            interrupt_id=interrupt_id,
            decided_by=decided_by,
            decided_at=when,
        )


class SessionNotFoundError(EngineError, LookupError):
    code = "session_not_found"


class UnknownCheckpointError(EngineError, LookupError):
    """No pause checkpoint with that id belongs to the session (another session's is unknown too)."""

    code = "checkpoint_unknown"


class CheckpointDecidedError(EngineError):
    """A rewind would reopen an interrupt decided by someone other than the rewinder (final).

    ``details`` holds ``interrupt_id``, ``decided_by`` and ``decided_at`` (ISO 8601) of that decision.
    """

    code = "checkpoint_decided"

    @classmethod
    def for_interrupt(
        cls, interrupt_id: str, decided_by: str | None, decided_at: float | None
    ) -> CheckpointDecidedError:
        """The error for ``interrupt_id``, decided by ``decided_by`` at ``decided_at`` (seconds since the epoch)."""
        when = (
            datetime.datetime.fromtimestamp(decided_at, tz=datetime.UTC).isoformat() if decided_at is not None else None
        )
        return cls(
            f"Interrupt {interrupt_id} was decided by {decided_by or 'someone else'}"
            + (f" at {when}" if when else "")
            + "; a rewind cannot reopen it.",
            interrupt_id=interrupt_id,
            decided_by=decided_by,
            decided_at=when,
        )


class SessionBusyError(EngineError):
    code = "session_busy"
    retryable = True


class ConcurrencyError(EngineError):
    code = "session_conflict"
    retryable = True


class SessionClosedError(EngineError):
    code = "session_closed"


class StuckSessionError(EngineError):
    """A commit would leave the session ``waiting`` with nothing to resume it: no pending
    interrupt, no stored answer to apply, no user message awaited. Stores refuse it; nothing is
    stored (``details["session_id"]``)."""

    code = "session_stuck"


class SessionNotFailedError(EngineError):
    """Only a failed session can be retried; ``details["status"]`` is the session's status."""

    code = "session_not_failed"


class VersionMismatchError(EngineError):
    code = "version_mismatch"


class NodeTimeoutError(EngineError, TimeoutError):
    code = "node_timeout"


class NodeFailedError(EngineError):
    code = "node_failed"


class ModelError(EngineError):
    code = "model_error"


def node_failed(node_path: str, error: BaseException | None) -> NodeFailedError:
    """Wrap a node's error as NodeFailedError (unchanged if it is one already).

    ``details`` holds ``node_path`` and, for an :class:`EngineError`, ``cause`` (its ``to_dict()``).
    """
    if isinstance(error, NodeFailedError):
        return error
    details: dict[str, Any] = {"node_path": node_path}
    if isinstance(error, EngineError):
        details["cause"] = error.to_dict()
    failed = NodeFailedError(f"Node {node_path} failed: {error}", **details)
    failed.__cause__ = error
    return failed
