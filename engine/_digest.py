"""Approvals bound to the exact call: the digest of a tool call's arguments, checked twice.

Every approval interrupt (a tool confirmation, ``adk_request_confirmation``, and a long-running
tool's pending result) carries :func:`args_digest` of the call as the reviewer is shown it: the
lowercase hex SHA-256 of the canonical JSON (sorted keys, no whitespace, UTF-8) of
``{"name": <tool name>, "args": <arguments>}``. It is kept in the interrupt record's metadata
(:data:`DIGEST_KEY`), never in ADK's event JSON, so recorded traces stay as ADK writes them.

The check happens twice:

1. When an answer is submitted (:func:`bind_answer`): an answer naming another digest is refused
   (:class:`~engine.ArgsChangedError`, nothing stored); an answer naming none is bound to the
   digest that was shown. An approval may carry edited arguments (``{"confirmed": true, "args":
   {...}}``): they are validated against the tool's parameter schema (:data:`SCHEMA_KEY`) and get
   a digest of their own (``edited_args_digest``).
2. When the approved tool runs (:func:`approved_args`): the call waiting in the agent's checkpoint
   must still have the approved digest, and edited arguments their own; otherwise the tool never
   runs. So approved arguments cannot drift on a replay, a restore or a re-run.

Shapes (an approval's stored answer): ``{"confirmed": true, "args_digest": str, "args"?: dict,
"edited_args_digest"?: str, ...}``; a decline is stored without them. Follows the 2026 reports on
Vercel AI SDK's approvals (approved arguments drifting on replay) and Microsoft Agent Framework's
exact-argument approvals.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ._errors import AnswerInvalidError, ArgsChangedError
from ._interrupts import InterruptKind, validate_json
from ._store import InterruptRecord

__all__ = [
    "DIGEST_KEY",
    "EDITED_KEY",
    "SCHEMA_KEY",
    "approval_metadata",
    "approved_args",
    "args_digest",
    "bind_answer",
    "tool_confirmation",
]

DIGEST_KEY = "args_digest"
"""The key of the digest: in an interrupt record's ``metadata`` and in an answer."""
SCHEMA_KEY = "args_schema"
"""The key of the tool's parameter schema (JSON Schema) in a confirmation record's ``metadata``."""
EDITED_KEY = "edited_args_digest"
"""The key of edited arguments' digest in a confirmation's stored answer."""
ARGS_KEY = "args"
"""The key of edited arguments in a confirmation's answer."""


def args_digest(name: str, args: Any) -> str:
    """The hex SHA-256 of ``{"name": name, "args": args}`` as canonical JSON (see the module).

    Raises:
        TypeError: ``args`` holds something JSON cannot carry.
    """
    text = json.dumps({"name": name, "args": args}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def approval_metadata(name: str, args: Any, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The interrupt metadata binding an approval to the call ``name(args)``: its digest, and the
    tool's parameter schema (``schema``) that edited arguments must fit."""
    metadata: dict[str, Any] = {DIGEST_KEY: args_digest(name, args)}
    if schema is not None:
        metadata[SCHEMA_KEY] = schema
    return metadata


def bind_answer(record: InterruptRecord, value: Any) -> Any:
    """The answer ``value`` to ``record`` bound to the digest stored with it (see the module).

    ``value`` is the normalised answer (a dict for confirmations and long-running tools).
    Interrupts without a digest (requests for input, node gates) give it back unchanged. A
    long-running tool's answer loses its ``args_digest`` once checked (the model gets the result
    only), and so does a decline of a confirmation (with any edited ``args``): it runs nothing.

    Raises:
        ArgsChangedError: the answer names a digest other than the stored one
            (``details``: ``interrupt_id``, ``expected``, ``given``).
        AnswerInvalidError: ``args_digest`` is not a string, edited ``args`` are not an object, or
            they fail the tool's parameter schema (``errors``, paths under ``args``).
    """
    metadata = record.metadata
    stored = metadata.get(DIGEST_KEY)
    if not stored or not isinstance(value, dict):
        return value
    given = value.get(DIGEST_KEY)
    if given is not None and not isinstance(given, str):
        raise AnswerInvalidError(
            "args_digest must be the text the interrupt showed.",
            errors=[{"path": [DIGEST_KEY], "message": "not a string"}],
        )
    if given is not None and given.lower() != stored:
        raise ArgsChangedError(
            "The tool call's arguments changed since they were shown: review the call again.",
            interrupt_id=record.id,
            expected=stored,
            given=given[:80],
        )
    bound = {k: v for k, v in value.items() if k not in (DIGEST_KEY, EDITED_KEY)}
    if record.kind == InterruptKind.LONG_RUNNING:
        return bound
    if bound.get("confirmed") is not True:  # a decline runs nothing: no digest, no edited arguments
        bound.pop(ARGS_KEY, None)
        return bound
    bound[DIGEST_KEY] = stored
    if ARGS_KEY in bound:
        edited = bound[ARGS_KEY]
        if not isinstance(edited, dict):
            raise AnswerInvalidError(
                "Edited arguments must be an object.", errors=[{"path": [ARGS_KEY], "message": "not an object"}]
            )
        schema = metadata.get(SCHEMA_KEY)
        errors = validate_json(edited, schema) if isinstance(schema, dict) else []
        if errors:
            errors = [{"path": [ARGS_KEY, *e["path"]], "message": e["message"]} for e in errors]
            raise AnswerInvalidError("The edited arguments do not fit the tool's parameters.", errors=errors)
        bound[EDITED_KEY] = args_digest(str((record.tool_call or {}).get("name") or record.function_name), edited)
    return bound


def approved_args(name: str, args: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments an approval lets the tool run with, or None when it must not run.

    ``name`` and ``args`` are the call as the agent's checkpoint holds it; ``answer`` the stored
    confirmation. An answer without a digest (one stored before digests existed) approves the
    call as it is. None when the call's digest is not the approved one, or edited arguments do not
    have the digest they were approved with.
    """
    approved = answer.get(DIGEST_KEY)
    if approved and approved != args_digest(name, args):
        return None
    if ARGS_KEY not in answer:
        return args
    edited = answer[ARGS_KEY]
    if not isinstance(edited, dict) or answer.get(EDITED_KEY) != args_digest(name, edited):
        return None
    return edited


def tool_confirmation(answer: dict[str, Any]) -> dict[str, Any]:
    """The stored confirmation as the tool's ``tool_context.tool_confirmation`` shows it: ADK's
    ``{"confirmed", "payload"?, ...}``, without the binding's keys (digests, edited ``args``)."""
    return {k: v for k, v in answer.items() if k not in (DIGEST_KEY, EDITED_KEY, ARGS_KEY)}
