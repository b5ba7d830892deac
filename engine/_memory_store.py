"""The in-memory :class:`~engine.Store`, for tests, scripts and benchmarks.

Records handed out are copies, so callers cannot change stored data by accident. Events and
pause checkpoints (kept for :meth:`InMemoryStore.restore_checkpoint`) are stored as JSON text:
about a quarter of the memory of the objects (an event of a few hundred bytes of JSON is about
3 KB as a pydantic object), and nothing outside can reach into them. An event's text is ADK's
session JSON as pydantic writes it with ``exclude_none`` (what ADK's own session services
store); fields left at their defaults are written too, which costs a third of the time of
leaving them out. When a session pauses, the events since its previous pause are packed into one
Zstandard frame (level 1, with a preset dictionary of the event's keys: about 8 µs for the four
events of a review, a quarter of their size): a paused session holds its history packed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from ._errors import (
    AlreadyDecidedError,
    CheckpointDecidedError,
    ConcurrencyError,
    SessionClosedError,
    SessionNotFoundError,
    StuckSessionError,
    UnknownInterruptError,
)
from ._events import Event, new_id
from ._memory_data import (
    MemCheckpoint,
    MemSession,
    clone,
    dumps,
    event_json,
    event_to_json,
    loads,
    pack,
    record_copy,
    unpack,
)
from ._state import split_delta
from ._store import (
    Answer,
    AnswerGuard,
    Commit,
    Decision,
    InterruptRecord,
    RunLoad,
    SessionRecord,
    SessionStatus,
    StoredAnswer,
    awaits_message,
    rewind_event,
)

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A :class:`~engine.Store` in process memory (see the module docstring).

    Args:
        clock: seconds for leases (default ``time.monotonic``); a test passes its own to let a
            dead worker's lease expire without waiting.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sessions: dict[str, MemSession] = {}
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = asyncio.Lock()

    def _missing(self, session_id: str) -> NoReturn:
        raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)

    # -- sessions ----------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        workflow_version: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> SessionRecord:
        sid = session_id or new_id()
        if sid in self._sessions:
            raise ConcurrencyError(f"Session {sid!r} already exists.", session_id=sid)
        record = SessionRecord(
            id=sid,
            app_name=app_name,
            user_id=user_id,
            state=dict(state or {}),
            workflow_version=workflow_version,
            metadata=dict(metadata or {}),
        )
        self._sessions[sid] = MemSession(record=record)
        return record_copy(record)

    async def get_session(self, session_id: str) -> SessionRecord:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        return record_copy(mem.record, loads(mem.checkpoint))

    async def list_events(self, session_id: str, *, path: str | None = None, after: int = 0) -> list[Event]:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        lines = [line for chunk in mem.packed or () for line in unpack(chunk)]
        events = [Event.model_validate_json(raw) for raw in [*lines, *mem.events][after:]]
        if path is not None:
            events = [e for e in events if e.node_info.path == path]
        return events

    async def get_shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return {**self._app_state.get(app_name, {}), **self._user_state.get((app_name, user_id), {})}

    # -- commits -----------------------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> SessionRecord:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        record = mem.record
        if record.version != commit.expected_version:
            raise ConcurrencyError(
                f"Session {session_id} is at version {record.version}, not {commit.expected_version}.",
                session_id=session_id,
            )
        if commit.lease_owner is not None and mem.lease_owner != commit.lease_owner:
            raise ConcurrencyError(f"Session {session_id}: the run lost its lease.", session_id=session_id)
        if commit.status == SessionStatus.WAITING and not commit.opened and not self._can_resume(mem, commit):
            raise StuckSessionError(
                f"Session {session_id} would wait with nothing to resume it.", session_id=session_id
            )
        events = commit.events
        for event in events:
            actions = event.actions
            if actions is None or not actions.state_delta:
                continue
            session_delta, app_delta, user_delta = split_delta(actions.state_delta)
            record.state.update(session_delta)
            if app_delta:
                self._app_state.setdefault(record.app_name, {}).update(app_delta)
            if user_delta:
                self._user_state.setdefault((record.app_name, record.user_id), {}).update(user_delta)
        if commit.lease_owner is not None and commit.lease_ttl:
            mem.lease_expires = self._clock() + commit.lease_ttl
        if events:
            mem.events += [event_to_json(event, by_alias=True, exclude_none=True) for event in events]  # as event_json
        for opened in commit.opened:
            rec = clone(opened)
            mem.newest[rec.id] = len(mem.interrupts)
            mem.interrupts.append(rec)
            mem.pending[rec.id] = rec
        for wire in commit.cancelled:
            cancelled = mem.pending.pop(wire, None)
            if cancelled is not None:
                cancelled.status = "cancelled"
        if commit.consumed:
            consumed = set(commit.consumed)
            mem.answers = [a for a in mem.answers if a.id not in consumed]
        record.status = commit.status
        mem.checkpoint = dumps(commit.checkpoint)
        record.invocation_id = commit.invocation_id or record.invocation_id
        record.version += 1
        record.updated_at = time.time()
        if commit.output is not None:
            record.output = commit.output
        record.error = commit.error
        if commit.pause and mem.events:
            chunk = pack(mem.events)
            if mem.packed is None:
                mem.packed = [chunk]
            else:
                mem.packed.append(chunk)
            mem.events.clear()
        if commit.pause and commit.checkpoint is not None:
            checkpoint_id = new_id()
            mem.checkpoints.append(
                MemCheckpoint(
                    id=checkpoint_id,
                    data=mem.checkpoint,
                    state=dumps(record.state),
                    pending=tuple(mem.newest[wire] for wire in mem.pending),
                    opened=len(mem.interrupts),
                )
            )
            record.checkpoint_id = checkpoint_id
        return record_copy(record, commit.checkpoint)

    @staticmethod
    def _can_resume(mem: MemSession, commit: Commit) -> bool:
        """Whether the session, after ``commit``, has a pending interrupt, an answer to apply or
        awaits a message (the ``waiting`` invariant of :class:`~engine.Store`)."""
        if any(wire not in commit.cancelled for wire in mem.pending):
            return True
        consumed = set(commit.consumed)
        return any(a.id not in consumed for a in mem.answers) or awaits_message(commit.checkpoint)

    # -- interrupts and answers --------------------------------------------------------------

    async def pending_interrupts(self, session_id: str) -> list[InterruptRecord]:
        return [clone(r) for r in (self._sessions.get(session_id) or self._missing(session_id)).pending.values()]

    async def get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        at = mem.newest.get(interrupt_id)
        return clone(mem.interrupts[at]) if at is not None else None

    async def submit_answers(
        self,
        session_id: str,
        answers: list[Answer],
        event: Event,
        *,
        decided_by: str | None,
        decisions: Mapping[str, Decision] | None = None,
        guard: AnswerGuard | None = None,
    ) -> None:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        pending = mem.pending
        for answer in answers:
            if answer.interrupt_id and answer.interrupt_id not in pending:
                at = mem.newest.get(answer.interrupt_id)
                if at is not None:
                    done = mem.interrupts[at]
                    raise AlreadyDecidedError.for_interrupt(done.id, done.status, done.decided_by, done.decided_at)
                raise UnknownInterruptError(f"No pending interrupt {answer.interrupt_id!r}.", pending=sorted(pending))
        if guard is not None:
            for answer in answers:
                if answer.interrupt_id and answer.final:
                    guard.check(session_id, answer.interrupt_id)
        now = time.time()
        for answer in answers:
            rec = pending.get(answer.interrupt_id)
            if rec is not None and answer.final:
                del pending[answer.interrupt_id]
                rec.status = "resolved"
                rec.response = answer.value
                rec.decided_by = decided_by
                rec.decided_at = now
            mem.answers.append(StoredAnswer(answer.interrupt_id, answer.value, answer.final, id=mem.next_answer_id))
            mem.next_answer_id += 1
        mem.events.append(event_json(event))

    async def take_answers(self, session_id: str) -> list[StoredAnswer]:
        return list((self._sessions.get(session_id) or self._missing(session_id)).answers)

    # -- leases ------------------------------------------------------------------------------

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        now = self._clock()
        if mem.lease_owner not in (None, owner) and mem.lease_expires > now:
            return False
        mem.lease_owner = owner
        mem.lease_expires = now + ttl
        return True

    async def release_lease(self, session_id: str, owner: str) -> None:
        mem = self._sessions.get(session_id) or self._missing(session_id)
        if mem.lease_owner == owner:
            mem.lease_owner = None
            mem.lease_expires = 0.0

    async def open_run(self, session_id: str, owner: str, ttl: float) -> RunLoad | None:
        if not await self.acquire_lease(session_id, owner, ttl):
            return None
        mem = self._sessions.get(session_id) or self._missing(session_id)
        record = mem.record
        return RunLoad(
            record=record_copy(record, loads(mem.checkpoint)),
            pending=[clone(r) for r in mem.pending.values()],
            answers=list(mem.answers),
            shared_state=await self.get_shared_state(record.app_name, record.user_id),
        )

    async def close_run(self, session_id: str, owner: str) -> bool:
        await self.release_lease(session_id, owner)
        return bool((self._sessions.get(session_id) or self._missing(session_id)).answers)

    # -- checkpoints -------------------------------------------------------------------------

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        found = (self._sessions.get(session_id) or self._missing(session_id)).find_checkpoint(checkpoint_id)
        return loads(found.data) if found is not None else None

    async def restore_checkpoint(
        self,
        session_id: str,
        checkpoint_id: str,
        *,
        lease_owner: str | None = None,
        decided_by: str | None = None,
    ) -> SessionRecord | None:
        """See :meth:`engine.Store.restore_checkpoint` (closed sessions and others' decisions refused)."""
        mem = self._sessions.get(session_id) or self._missing(session_id)
        found = mem.find_checkpoint(checkpoint_id)
        if found is None:
            return None
        if lease_owner is not None and mem.lease_owner != lease_owner:
            raise ConcurrencyError(f"Session {session_id}: the run lost its lease.", session_id=session_id)
        record = mem.record
        if record.status in SessionStatus.CLOSED:
            raise SessionClosedError(
                f"Session {session_id} is {record.status}; it cannot be rewound.",
                session_id=session_id,
                status=record.status,
            )
        for wire in (mem.interrupts[n].id for n in found.pending):
            newest = mem.interrupts[mem.newest[wire]]
            if wire not in mem.pending and newest.status == "resolved" and newest.decided_by != decided_by:
                raise CheckpointDecidedError.for_interrupt(wire, newest.decided_by, newest.decided_at)
        for later in mem.interrupts[found.opened :]:
            if later.status == "resolved" and later.decided_by != decided_by:
                raise CheckpointDecidedError.for_interrupt(later.id, later.decided_by, later.decided_at)
        data = loads(found.data)
        restored_state = loads(found.state)
        invocation_id = str(data.get("invocation_id") or record.invocation_id)
        mem.events.append(
            event_json(
                rewind_event(
                    checkpoint_id=checkpoint_id,
                    invocation_id=invocation_id,
                    current=record.state,
                    restored=restored_state,
                )
            )
        )
        wanted = {r.id: r for r in (mem.interrupts[n] for n in found.pending)}
        for wire in [w for w in mem.pending if w not in wanted]:
            mem.pending.pop(wire).status = "cancelled"
        for wire, then in wanted.items():
            if wire not in mem.pending:
                reopened = clone(then)
                reopened.status, reopened.response = "pending", None
                reopened.decided_by, reopened.decided_at = None, None
                mem.newest[wire] = len(mem.interrupts)
                mem.interrupts.append(reopened)
                mem.pending[wire] = reopened
        mem.answers = []
        record.state = restored_state
        mem.checkpoint = found.data
        record.checkpoint_id = checkpoint_id
        record.status = SessionStatus.WAITING
        record.invocation_id = invocation_id
        record.output = None
        record.error = None
        record.version += 1
        record.updated_at = time.time()
        return record_copy(record, data)
