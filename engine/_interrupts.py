"""Requests for human input (interrupts) and how answers are unwrapped and validated.

A node pauses by yielding or returning :class:`RequestInput`. The engine turns it into an event
with one ``adk_request_input`` function call whose id is the interrupt id and which is listed in
``longRunningToolIds`` (ADK 2.x, ``events/request_input.py`` and
``workflow/utils/_workflow_hitl_utils.py``). An answer is a function response with that id.

Answers are unwrapped as ADK does (a one-key ``{"result": v}`` becomes ``v``), with one fix for
what ADK users trip over: a string answer is JSON-parsed only when the interrupt's
``response_schema`` asks for something other than a string, so free text such as ``"42"`` stays
text. The value is then validated against the schema, its strings' ``format`` too
(``engine._formats``: a person's or a caller's typing mistake in an email address, a web address
or a date is refused at every door alike); failures raise :class:`~engine.AnswerInvalidError`
with every error, and nothing is stored.

A **cancelled answer** (:func:`cancelled_answer`) is how a host says "nobody will answer this":
ADK 2.11 seals an aborted invocation's pending calls with a synthesized function response
(``{"error": "Invocation was aborted by client."}``, ``events/_abort_events.py``) and AG-UI 1.0
resumes with ``status: "cancelled"``; both record the cancel as the interrupt's answer. Here it is an
ordinary answer event (a user function response with the interrupt's id) the waiting node receives
and can route on, accepted whatever the interrupt's ``response_schema`` (a form's schema cannot
foresee it). Hosts must refuse the shape from outsiders who could otherwise skip the schema.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jsonschema
from pydantic import BaseModel, TypeAdapter

from ._errors import AnswerInvalidError, AnswerMissingError, ConfigurationError
from ._formats import FORMAT_CHECKER, format_error

__all__ = [
    "CONFIRMATION_SCHEMA",
    "InterruptKind",
    "RequestInput",
    "cancelled_answer",
    "is_cancelled_answer",
    "normalize_answer",
    "schema_to_json",
]


class InterruptKind:
    """What an interrupt waits for; stored with it and used by reviewers' pages and AG-UI."""

    INPUT = "input"
    """``RequestInput`` from a node, or the model's ``request_input`` tool call."""
    CONFIRMATION = "confirmation"
    """A tool call (or ``@node(require_confirmation=...)``) waiting for approval."""
    LONG_RUNNING = "long_running"
    """A long-running tool whose result arrives later from a person or an outside system."""


CONFIRMATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "ToolConfirmation",
    "properties": {
        "confirmed": {"type": "boolean", "description": "Whether the tool call is approved."},
        "payload": {"description": "Optional edited arguments or extra data for the tool."},
        "hint": {"type": "string"},
    },
    "required": ["confirmed"],
}


@dataclass
class RequestInput:
    """Ask a person (or an outside system) for input.

    ``interrupt_id`` (str | None): stable id, reusable across loop iterations; a fresh one is
    generated when None. ``message`` (str): the prompt shown to the reviewer. ``payload`` (any
    JSON): data for the reviewer. ``response_schema``: a JSON Schema dict, a pydantic model or a
    Python type describing the expected answer; None means free text. Extra keys in
    ``metadata`` (e.g. ``queue``, ``due_in_seconds``) are kept with the interrupt for hosts.
    """

    interrupt_id: str | None = None
    message: str | None = None
    payload: Any = None
    response_schema: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def schema_json(self) -> dict[str, Any] | None:
        """The response schema as a JSON Schema dict (None for free text)."""
        return schema_to_json(self.response_schema)


def schema_to_json(schema: Any) -> dict[str, Any] | None:
    """Turn a JSON Schema dict, a pydantic model class or a Python type into JSON Schema."""
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_json_schema()
        return TypeAdapter(schema).json_schema()
    except Exception as exc:  # pydantic raises several error types for unsupported types
        raise ConfigurationError(f"Cannot turn {schema!r} into a JSON Schema: {exc}") from exc


@lru_cache(maxsize=512)
def _validator(schema_text: str, formats: bool) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=FORMAT_CHECKER if formats else None)


def validate_json(value: Any, schema: dict[str, Any], *, formats: bool = False) -> list[dict[str, Any]]:
    """Validate ``value`` against a JSON Schema; return ``[{"path": [...], "message": str}]``.

    With ``formats``, a string's ``format`` is checked too (``engine._formats``: ``email``,
    ``uri``, ``date``, ``date-time``…), its message saying what the value should look like.
    """
    validator = _validator(json.dumps(schema, sort_keys=True), formats)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [
        {
            "path": list(e.absolute_path),
            "message": format_error(e.validator_value) if e.validator == "format" else e.message,
        }
        for e in errors
    ]


def _wants_string(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def cancelled_answer(kind: str, reason: str = "") -> dict[str, Any]:
    """The answer a cancelled interrupt of ``kind`` receives (see the module docstring).

    ``{"cancelled": true, "reason"?: str}`` for input, ``{"confirmed": false, "cancelled": true,
    "reason"?: str}`` for tool confirmations (a cancelled call never runs), ``{"status":
    "cancelled", "reason"?: str}`` for long-running tools. ``reason`` is left out when blank.
    """
    extra: dict[str, Any] = {"reason": reason} if reason else {}
    if kind == InterruptKind.CONFIRMATION:
        return {"confirmed": False, "cancelled": True, **extra}
    if kind == InterruptKind.LONG_RUNNING:
        return {"status": "cancelled", **extra}
    return {"cancelled": True, **extra}


def is_cancelled_answer(value: Any) -> bool:
    """Whether ``value`` (an answer as received, before unwrapping) is a :func:`cancelled_answer`."""
    if not isinstance(value, dict) or not value:
        return False
    if not isinstance(value.get("reason", ""), str):
        return False
    keys = set(value)
    if value.get("status") == "cancelled":
        return keys <= {"status", "reason"}
    if value.get("cancelled") is not True:
        return False
    return keys <= {"cancelled", "reason"} or (
        keys <= {"confirmed", "cancelled", "reason"} and value.get("confirmed") is False
    )


def normalize_answer(kind: str, response: Any, schema: dict[str, Any] | None) -> Any:
    """Unwrap and validate an answer; return the value the waiting node receives.

    ``response`` is the function response's ``response`` object (or a bare value). For
    ``input`` interrupts the answer is unwrapped and validated against ``schema``; for
    ``confirmation`` it becomes ``{"confirmed": bool, "payload"?: ...}`` (a bare bool or
    ``"yes"``/``"no"`` is accepted); for ``long_running`` the response object is passed through.

    Raises:
        AnswerInvalidError: the answer does not fit (``details["errors"]`` lists why).
        AnswerMissingError: a free-text answer (no ``schema``) is ``None`` or blank.
    """
    if kind == InterruptKind.LONG_RUNNING:
        if isinstance(response, dict):
            return response
        return {"result": response}
    value = response
    if isinstance(value, dict) and len(value) == 1 and "result" in value:
        value = value["result"]
    if kind == InterruptKind.CONFIRMATION:
        return _normalize_confirmation(value)
    if is_cancelled_answer(value):
        return value  # a cancel is every interrupt's possible answer, whatever its schema
    if schema is None:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise AnswerMissingError("The answer is empty: a free-text interrupt needs text.")
        return value
    if isinstance(value, str) and not _wants_string(schema):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    errors = validate_json(value, schema, formats=True)
    if errors:
        raise AnswerInvalidError("The answer does not match the requested schema.", errors=errors)
    return value


_YES = {"yes", "y", "true", "approve", "approved", "confirm", "confirmed", "ok"}
_NO = {"no", "n", "false", "reject", "rejected", "decline", "declined"}


def _normalize_confirmation(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"confirmed": value}
    if isinstance(value, str) and value.strip().lower() in _YES | _NO:
        return {"confirmed": value.strip().lower() in _YES}
    if isinstance(value, dict):
        errors = validate_json(value, CONFIRMATION_SCHEMA)
        if errors:
            raise AnswerInvalidError("A confirmation needs {'confirmed': true|false}.", errors=errors)
        return value
    raise AnswerInvalidError(
        "A confirmation needs {'confirmed': true|false}.",
        errors=[{"path": [], "message": f"{value!r} is not a confirmation"}],
    )
