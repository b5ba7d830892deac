"""A session's input checked against its workflow's input schema, refused in the workflow's words.

The engine says which node refused (``Node <name>: input does not match its input_schema.``), which
is right for a node inside a graph but, for the first message, names the workflow's internal root
node. Every door that starts or messages a session goes through :func:`check_input`, so callers
read which field of their input is wrong and why, and nothing internal.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from engine import Runner, WorkflowDataError

__all__ = ["MAX_NAMED", "check_input", "input_refusal"]

MAX_NAMED = 3
"""Most field errors the message names (``details["errors"]`` lists up to 50)."""

_NOT_AN_OBJECT = ("model_type", "dict_type", "model_attributes_type")


def _field_errors(exc: WorkflowDataError) -> list[dict[str, Any]]:
    """``[{"path": [str | int, ...], "message": str}]``: pydantic's, except that an input that is
    not an object is said so (pydantic's sentence names the schema's class)."""
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        found = []
        for error in cause.errors()[:50]:
            path = list(error["loc"])
            message = "should be a JSON object" if error["type"] in _NOT_AN_OBJECT else str(error["msg"])
            found.append({"path": path, "message": message})
        return found
    return [e for e in exc.details.get("errors", []) if isinstance(e, dict)][:50]


def _named(error: dict[str, Any]) -> str:
    path = ".".join(str(p) for p in error.get("path", []))
    return f"{path}: {error.get('message', '')}" if path else f"the input {error.get('message', '')}"


def input_refusal(exc: WorkflowDataError) -> WorkflowDataError:
    """``exc`` (the root's input refused) as ``data_invalid`` with a message naming the fields:
    ``The input does not fit the workflow: complaint: String should have at least 1 character.``;
    ``details["errors"]`` as ``[{"path", "message"}]``."""
    errors = _field_errors(exc)
    named = "; ".join(_named(e) for e in errors[:MAX_NAMED])
    more = len(errors) - MAX_NAMED
    if more > 0:
        named += f"; and {more} more"
    message = f"The input does not fit the workflow: {named}." if named else "The input does not fit the workflow."
    return WorkflowDataError(message, errors=errors)


def check_input(runner: Runner, data: Any) -> Any:
    """``data`` coerced by the workflow's input schema (JSON data).

    Raises:
        engine.WorkflowDataError: ``data_invalid``, see :func:`input_refusal`.
    """
    try:
        return runner.app.validate_input(data)
    except WorkflowDataError as exc:
        raise input_refusal(exc) from exc
