"""Answers to interrupts: matched to pending interrupts, unwrapped, validated, made into an event.

:func:`prepare_answers` does everything :meth:`engine.Runner.submit` checks before the store is
written: which interrupt each answer is for (``None`` names the only pending one), whether it is
still pending (first answer wins), whether it fits the interrupt's schema, and whether a
long-running tool's response is an interim update or its result. Nothing is stored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._digest import bind_answer
from ._errors import AlreadyDecidedError, AmbiguousAnswerError, InterruptNotReadyError, UnknownInterruptError
from ._events import Content, Event
from ._interrupts import InterruptKind, normalize_answer
from ._store import Answer, InterruptRecord, SessionStatus, Store

__all__ = ["INTERIM_STATUSES", "Answers", "prepare_answers"]

Answers = Mapping[str, Any] | Mapping[str | None, Any] | Content
"""Answers keyed by interrupt id (``None``: the only pending one), or a user Content of function responses."""

INTERIM_STATUSES = frozenset({"pending", "in-progress", "in_progress", "running", "processing", "queued"})
"""A long-running tool's response whose ``status`` is one of these is an update, not the result."""


async def prepare_answers(
    store: Store, session_id: str, answers: Answers
) -> tuple[list[InterruptRecord], list[Answer], Event]:
    """The interrupts answered, the answers to store and the user event carrying them.

    Raises:
        AmbiguousAnswerError: an answer names no id while several interrupts are pending.
        UnknownInterruptError: an id names no pending interrupt (``details["pending"]``).
        AlreadyDecidedError: the interrupt was answered already (first answer wins).
        AnswerInvalidError: an answer fails the interrupt's schema (or edited arguments the tool's).
        ArgsChangedError: an approval names another argument digest than its call's (``engine._digest``).
        InterruptNotReadyError: an id names no pending interrupt while a run of the session goes
            on, which may be about to open it (retryable).
    """
    items: list[tuple[str | None, Any]]
    if isinstance(answers, Content):
        items = [(r.id, r.response) for r in answers.function_responses()]
    else:
        items = list(answers.items())
    pending = {r.id: r for r in await store.pending_interrupts(session_id)}
    records: list[InterruptRecord] = []
    to_store: list[Answer] = []
    parts: list[dict[str, Any]] = []  # Part fields: pydantic builds the event's models in one go
    for interrupt_id, response in items:
        if interrupt_id is None:
            if len(pending) != 1:
                ids = sorted(pending)
                if not ids:
                    await _refuse_early(store, session_id, None, ids)
                cls = AmbiguousAnswerError if ids else UnknownInterruptError
                raise cls(
                    "Name the interrupt to answer: " + (", ".join(ids) if ids else "none is pending") + ".",
                    pending=ids,
                )
            interrupt_id = next(iter(pending))
        rec = pending.get(interrupt_id)
        if rec is None:
            rec = await _late_pending(store, session_id, interrupt_id, sorted(pending))
        value = normalize_answer(rec.kind, response, rec.response_schema)
        value = bind_answer(rec, value)
        final = not (
            rec.kind == InterruptKind.LONG_RUNNING
            and isinstance(value, dict)
            and str(value.get("status", "")).lower() in INTERIM_STATUSES
        )
        to_store.append(Answer(interrupt_id, value, final))
        wire_response = response if isinstance(response, dict) else {"result": response}
        if rec.kind == InterruptKind.LONG_RUNNING and rec.args_digest:  # the tool's result, as the model gets it
            wire_response = {k: v for k, v in wire_response.items() if k != "args_digest"}
        parts.append({"function_response": {"id": interrupt_id, "name": rec.function_name, "response": wire_response}})
        records.append(rec)
    if not records:
        raise UnknownInterruptError("No answer given.", pending=sorted(pending))
    branches = {r.branch for r in records}
    event = Event.model_validate(
        {
            "author": "user",
            "invocation_id": records[0].invocation_id,
            "branch": branches.pop() if len(branches) == 1 else None,
            "content": {"role": "user", "parts": parts},
            "node_info": {},
        }
    )
    return records, to_store, event


async def _late_pending(store: Store, session_id: str, interrupt_id: str, pending: list[str]) -> InterruptRecord:
    """The interrupt ``interrupt_id`` if it became pending since we looked; else why not.

    The session's status is read before the interrupt: a run that committed its pause in
    between is then seen as waiting, and its interrupt as pending.
    """
    record = await store.get_session(session_id)
    found = await store.get_interrupt(session_id, interrupt_id)
    if found is not None and found.status == "pending":
        return found
    if found is not None:
        raise AlreadyDecidedError.for_interrupt(interrupt_id, found.status, found.decided_by, found.decided_at)
    if record.status == SessionStatus.RUNNING:
        raise InterruptNotReadyError(
            f"No pending interrupt {interrupt_id!r} yet: the session is running; retry once it pauses.",
            interrupt_id=interrupt_id,
            pending=pending,
        )
    raise UnknownInterruptError(f"No pending interrupt {interrupt_id!r}.", pending=pending)


async def _refuse_early(store: Store, session_id: str, interrupt_id: str | None, pending: list[str]) -> None:
    """Raise InterruptNotReadyError when the session is running (an answer may be early)."""
    record = await store.get_session(session_id)
    if record.status == SessionStatus.RUNNING:
        raise InterruptNotReadyError(
            "No interrupt is pending yet: the session is running; retry once it pauses.",
            interrupt_id=interrupt_id,
            pending=pending,
        )
