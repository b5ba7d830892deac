"""Engine interrupts as AG-UI interrupts, and AG-UI resume entries as engine answers.

AG-UI 1.0, ``RunFinishedInterruptOutcome`` and docs/concepts/interrupts (rules 2-6):

| engine kind | reason | toolCallId | responseSchema |
|---|---|---|---|
| ``input`` (RequestInput, ``request_input`` tool) | ``input_required`` | — | its schema, else ``{"type": "string"}`` |
| ``confirmation`` of a tool call | ``tool_call`` | the original call's id | ToolConfirmation |
| ``confirmation`` of a node (``require_confirmation``) | ``confirmation`` | — | ToolConfirmation |
| ``long_running`` tool result | ``reviewconsole:long_running`` | the call's id | ``{"type": "object"}`` |

The interrupt id is the engine's wire id (stable across restarts). ``metadata`` holds
``checkpointId`` (the session's checkpoint at the pause, for ``forwardedProps.checkpointId``),
``kind``, ``nodePath``, the request's ``payload`` and, for a tool call's confirmation or a
long-running result, ``argsDigest``: the digest of the call's arguments as shown, which an
approval names back (``engine._digest``). ``expiresAt`` is the inbox item's due time.

A long-running result is not a ``tool_call`` interrupt on purpose: its tool did return (an interim
result, sent as TOOL_CALL_RESULT in the paused run); the late result is a second TOOL_CALL_RESULT
for the same call in the run that resumes it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ag_ui.core import Interrupt

from engine import AnswerInvalidError, InterruptKind, InterruptRecord
from engine._interrupts import CONFIRMATION_SCHEMA

__all__ = ["LONG_RUNNING_REASON", "answer_value", "expires_at", "to_agui"]

LONG_RUNNING_REASON = "reviewconsole:long_running"


def expires_at(due: dt.datetime | None) -> str | None:
    """An ISO 8601 UTC timestamp (``…Z``) for AG-UI's ``expiresAt``."""
    if due is None:
        return None
    return due.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def to_agui(record: InterruptRecord, *, checkpoint_id: str | None, due: dt.datetime | None) -> Interrupt:
    """The AG-UI interrupt for a pending engine interrupt (see the module docstring)."""
    metadata: dict[str, Any] = {"kind": record.kind, "nodePath": record.path}
    if checkpoint_id:
        metadata["checkpointId"] = checkpoint_id
    if record.payload is not None:
        metadata["payload"] = record.payload
    if record.args_digest:
        metadata["argsDigest"] = record.args_digest
    tool_call_id = None
    if record.kind == InterruptKind.CONFIRMATION:
        call_id = (record.tool_call or {}).get("id")
        reason, schema, tool_call_id = (
            ("tool_call", CONFIRMATION_SCHEMA, call_id) if call_id else ("confirmation", CONFIRMATION_SCHEMA, None)
        )
    elif record.kind == InterruptKind.LONG_RUNNING:
        reason, schema, tool_call_id = LONG_RUNNING_REASON, {"type": "object"}, record.id
    else:
        reason, schema = "input_required", record.response_schema or {"type": "string"}
    return Interrupt(
        id=record.id,
        reason=reason,
        message=record.message or None,
        tool_call_id=tool_call_id,
        response_schema=schema,
        expires_at=expires_at(due),
        metadata=metadata,
    )


def answer_value(record: InterruptRecord, payload: Any) -> Any:
    """The engine answer for a ``resolved`` payload (validated later by ``Runner.submit``).

    Confirmations also take AG-UI's approve-with-edits shape ``{"approved": bool,
    "editedArgs"?: {...}, "argsDigest"?: str}`` (rule 7), mapped to ``{"confirmed": bool,
    "args": editedArgs, "args_digest": argsDigest}``: edited arguments are checked against the
    tool's parameters and are what runs (``engine._digest``). Any payload's ``argsDigest`` is
    read as ``args_digest``.

    Raises:
        AnswerInvalidError: ``approved`` that is not a JSON boolean (the string ``"false"`` would
            otherwise read as an approval).
    """
    value = payload
    if record.kind == InterruptKind.CONFIRMATION and isinstance(payload, dict) and "approved" in payload:
        if not isinstance(payload["approved"], bool):  # "false" is a non-empty string: never an approval
            raise AnswerInvalidError(
                "approved must be true or false.", errors=[{"path": ["approved"], "message": "must be true or false"}]
            )
        value = {"confirmed": payload["approved"]}
        if payload.get("editedArgs") is not None:
            value["args"] = payload["editedArgs"]
    if isinstance(payload, dict) and "argsDigest" in payload:
        value = {k: v for k, v in value.items() if k != "argsDigest"} | {"args_digest": payload["argsDigest"]}
    return value
