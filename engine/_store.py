"""The store protocol and its in-memory implementation.

A store keeps sessions (state, status, the latest checkpoint, a version counter and a run lease),
their append-only events, their interrupts and the answers delivered to them. The runner talks to
it through :class:`Store` only; the console implements it on the Django ORM.

Guarantees every implementation gives (tests run the same suite over each):

- ``commit`` is atomic: events, state changes, checkpoint, opened interrupts and consumed answers
  are stored together or not at all; it fails with :class:`~engine.ConcurrencyError` when the
  session's ``version`` is not ``expected_version`` (another writer got there first).
- ``submit_answers`` is first-wins: an interrupt that is no longer pending raises
  :class:`~engine.AlreadyDecidedError` naming who decided it and when; nothing is stored.
- ``acquire_lease`` gives at most one live run per session; a lease expires after ``ttl``
  seconds so that a crashed worker's session can be picked up again.
- ``restore_checkpoint`` rewinds a session to one of its pause checkpoints without deleting
  anything: the events stay, a rewind event (:func:`rewind_event`) is appended.
"""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ._errors import (
    AlreadyDecidedError,
    ConcurrencyError,
    SessionNotFoundError,
    UnknownInterruptError,
)
from ._events import Event, EventActions, NodeInfo, new_id
from ._state import split_delta

__all__ = [
    "Answer",
    "Commit",
    "Delivery",
    "InMemoryStore",
    "InterruptRecord",
    "SessionRecord",
    "SessionStatus",
    "Store",
    "rewind_event",
]


class SessionStatus:
    """Values of :attr:`SessionRecord.status`."""

    NEW = "new"
    RUNNING = "running"
    WAITING = "waiting"
    """Paused on one or more pending interrupts (or a task agent awaiting a message)."""
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    CLOSED = frozenset({COMPLETED, FAILED, CANCELLED})


@dataclass
class SessionRecord:
    """A stored session. ``state`` holds session keys only (no ``app:``/``user:``/``temp:``)."""

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = field(default_factory=dict)
    status: str = SessionStatus.NEW
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None
    version: int = 0
    workflow_version: str = ""
    invocation_id: str = ""
    output: Any = None
    error: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)


@dataclass
class InterruptRecord:
    """A request for input waiting on a person or an outside system.

    ``id`` is the wire id: the id of the ``adk_request_input`` / ``adk_request_confirmation`` /
    long-running tool call. ``local_id`` is the id the node asked with (they differ only when
    two pending requests used the same id). ``status`` is ``pending``, ``resolved`` or
    ``cancelled``; ``decided_at`` is seconds since the epoch.
    """

    id: str
    session_id: str
    kind: str
    path: str
    local_id: str = ""
    function_name: str = ""
    branch: str | None = None
    message: str | None = None
    payload: Any = None
    response_schema: dict[str, Any] | None = None
    tool_call: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    invocation_id: str = ""
    status: str = "pending"
    response: Any = None
    decided_by: str | None = None
    decided_at: float | None = None
    created_at: float = field(default_factory=time.time)


@dataclass
class Answer:
    """An answer for one interrupt: ``value`` is what the node receives; ``final`` closes it.

    A long-running tool may send interim updates (``final=False``): they are delivered but the
    interrupt stays pending. An empty ``interrupt_id`` carries a user message for an agent that
    waits for one (task mode).
    """

    interrupt_id: str
    value: Any
    final: bool = True


@dataclass
class Delivery:
    """An answer stored and not yet applied by a run; ``seq`` orders deliveries per session."""

    seq: int
    interrupt_id: str
    value: Any
    final: bool = True


@dataclass
class Commit:
    """One atomic write of a run's progress (see :meth:`Store.commit`)."""

    events: list[Event]
    checkpoint: dict[str, Any] | None
    status: str
    expected_version: int
    lease_owner: str | None = None
    invocation_id: str = ""
    opened: list[InterruptRecord] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    consumed: list[int] = field(default_factory=list)
    pause: bool = False
    """True when the run stops waiting: the checkpoint is kept as a resumable checkpoint."""
    lease_ttl: float | None = None
    """Extend the writer's lease by this many seconds from now."""
    output: Any = None
    error: dict[str, Any] | None = None


class Store(Protocol):
    """Persistence for sessions; see the module docstring for the guarantees."""

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        workflow_version: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> SessionRecord: ...

    async def get_session(self, session_id: str) -> SessionRecord:
        """Raises SessionNotFoundError."""
        ...

    async def list_events(self, session_id: str, *, path: str | None = None, after: int = 0) -> list[Event]:
        """Events in stored order; ``path`` keeps one node run's events; ``after`` skips the first n."""
        ...

    async def get_shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``app:`` and ``user:`` keys visible to this user's sessions of this app."""
        ...

    async def commit(self, session_id: str, commit: Commit) -> SessionRecord: ...

    async def pending_interrupts(self, session_id: str) -> list[InterruptRecord]: ...

    async def get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        """The newest interrupt with that wire id (ids may be reused once resolved)."""
        ...

    async def submit_answers(
        self,
        session_id: str,
        answers: list[Answer],
        event: Event,
        *,
        decided_by: str | None,
        context: dict[str, Any] | None = None,
    ) -> None:
        """Store answers and their user event atomically; first answer wins per interrupt.

        ``context`` carries host data about the decision (who, which action) for the store to keep.
        """
        ...

    async def take_deliveries(self, session_id: str) -> list[Delivery]: ...

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool: ...

    async def release_lease(self, session_id: str, owner: str) -> None: ...

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None: ...

    async def restore_checkpoint(
        self, session_id: str, checkpoint_id: str, *, lease_owner: str | None = None
    ) -> SessionRecord | None:
        """Rewind the session to the pause checkpoint ``checkpoint_id``, atomically.

        Afterwards the session waits at that checkpoint: its checkpoint and ``checkpoint_id`` are
        that pause's, its state is the state as of that pause, and the interrupts pending then
        are pending again under the same wire ids (re-opened if they were decided since);
        interrupts opened later are cancelled and stored answers not yet applied are dropped.
        Nothing is deleted: a :func:`rewind_event` carrying the state changes is appended.
        Returns None (and changes nothing) when the session has no such checkpoint.

        Raises:
            SessionNotFoundError: no such session.
            ConcurrencyError: ``lease_owner`` is given and does not hold the lease.
        """
        ...


REWIND_KEY = "rewindToCheckpoint"
"""Key of :attr:`Event.custom_metadata` on the event that marks a rewind."""


def rewind_event(*, checkpoint_id: str, invocation_id: str, current: dict[str, Any], restored: dict[str, Any]) -> Event:
    """The event appended by ``restore_checkpoint``: its state delta turns ``current`` into ``restored``.

    Keys added since the checkpoint are set to None (state keys are never deleted from events).
    """
    delta = {key: value for key, value in restored.items() if key not in current or current[key] != value}
    delta.update({key: None for key in current if key not in restored})
    event = Event(
        author="user",
        invocation_id=invocation_id,
        node_info=NodeInfo(path=""),
        custom_metadata={REWIND_KEY: checkpoint_id},
    )
    if delta:
        event.actions = EventActions(state_delta=delta)
    return event


@dataclass
class _MemCheckpoint:
    data: dict[str, Any]
    state: dict[str, Any]
    pending: list[InterruptRecord]


@dataclass
class _MemSession:
    record: SessionRecord
    events: list[Event] = field(default_factory=list)
    interrupts: list[InterruptRecord] = field(default_factory=list)
    pending: dict[str, InterruptRecord] = field(default_factory=dict)
    """Pending interrupts by wire id, in creation order (so no call scans the history)."""
    latest: dict[str, InterruptRecord] = field(default_factory=dict)
    """The newest interrupt per wire id."""
    deliveries: list[Delivery] = field(default_factory=list)
    next_seq: int = 1
    lease_owner: str | None = None
    lease_expires: float = 0.0
    checkpoints: dict[str, _MemCheckpoint] = field(default_factory=dict)


class InMemoryStore:
    """A :class:`Store` in process memory, for tests, scripts and benchmarks.

    Records handed out are copies, so callers cannot change stored data by accident.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _MemSession] = {}
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = asyncio.Lock()

    def _get(self, session_id: str) -> _MemSession:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id) from None

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
        self._sessions[sid] = _MemSession(record=record)
        return replace(record, state=dict(record.state))

    async def get_session(self, session_id: str) -> SessionRecord:
        record = self._get(session_id).record
        return replace(record, state=dict(record.state))

    async def list_events(self, session_id: str, *, path: str | None = None, after: int = 0) -> list[Event]:
        events = self._get(session_id).events[after:]
        if path is not None:
            events = [e for e in events if e.node_info.path == path]
        return list(events)

    async def get_shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return {**self._app_state.get(app_name, {}), **self._user_state.get((app_name, user_id), {})}

    async def commit(self, session_id: str, commit: Commit) -> SessionRecord:
        mem = self._get(session_id)
        record = mem.record
        if record.version != commit.expected_version:
            raise ConcurrencyError(
                f"Session {session_id} is at version {record.version}, not {commit.expected_version}.",
                session_id=session_id,
            )
        if commit.lease_owner is not None and mem.lease_owner != commit.lease_owner:
            raise ConcurrencyError(f"Session {session_id}: the run lost its lease.", session_id=session_id)
        for event in commit.events:
            session_delta, app_delta, user_delta = split_delta(event.state_delta)
            record.state.update(session_delta)
            if app_delta:
                self._app_state.setdefault(record.app_name, {}).update(app_delta)
            if user_delta:
                self._user_state.setdefault((record.app_name, record.user_id), {}).update(user_delta)
        if commit.lease_owner is not None and commit.lease_ttl:
            mem.lease_expires = time.monotonic() + commit.lease_ttl
        mem.events.extend(commit.events)
        for rec in commit.opened:
            rec = replace(rec)
            mem.interrupts.append(rec)
            mem.pending[rec.id] = rec
            mem.latest[rec.id] = rec
        for wire in commit.cancelled:
            cancelled = mem.pending.pop(wire, None)
            if cancelled is not None:
                cancelled.status = "cancelled"
        if commit.consumed:
            consumed = set(commit.consumed)
            mem.deliveries = [d for d in mem.deliveries if d.seq not in consumed]
        record.status = commit.status
        record.checkpoint = commit.checkpoint
        record.invocation_id = commit.invocation_id or record.invocation_id
        record.version += 1
        record.updated_at = time.time()
        if commit.output is not None:
            record.output = commit.output
        record.error = commit.error
        if commit.pause and commit.checkpoint is not None:
            checkpoint_id = new_id()
            mem.checkpoints[checkpoint_id] = _MemCheckpoint(
                data=copy.deepcopy(commit.checkpoint),
                state=copy.deepcopy(record.state),
                pending=[replace(r) for r in mem.pending.values()],
            )
            record.checkpoint_id = checkpoint_id
        return replace(record, state=dict(record.state))

    async def pending_interrupts(self, session_id: str) -> list[InterruptRecord]:
        return [replace(r) for r in self._get(session_id).pending.values()]

    async def get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        found = self._get(session_id).latest.get(interrupt_id)
        return replace(found) if found is not None else None

    async def submit_answers(
        self,
        session_id: str,
        answers: list[Answer],
        event: Event,
        *,
        decided_by: str | None,
        context: dict[str, Any] | None = None,
    ) -> None:
        mem = self._get(session_id)
        pending = mem.pending
        for answer in answers:
            if answer.interrupt_id and answer.interrupt_id not in pending:
                rec = mem.latest.get(answer.interrupt_id)
                if rec is not None:
                    raise AlreadyDecidedError.for_interrupt(rec.id, rec.status, rec.decided_by, rec.decided_at)
                raise UnknownInterruptError(f"No pending interrupt {answer.interrupt_id!r}.", pending=sorted(pending))
        now = time.time()
        for answer in answers:
            rec = pending.get(answer.interrupt_id)
            if rec is not None and answer.final:
                del pending[answer.interrupt_id]
                rec.status = "resolved"
                rec.response = answer.value
                rec.decided_by = decided_by
                rec.decided_at = now
            mem.deliveries.append(Delivery(mem.next_seq, answer.interrupt_id, answer.value, answer.final))
            mem.next_seq += 1
        mem.events.append(event)

    async def take_deliveries(self, session_id: str) -> list[Delivery]:
        return list(self._get(session_id).deliveries)

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool:
        mem = self._get(session_id)
        now = time.monotonic()
        if mem.lease_owner not in (None, owner) and mem.lease_expires > now:
            return False
        mem.lease_owner = owner
        mem.lease_expires = now + ttl
        return True

    async def release_lease(self, session_id: str, owner: str) -> None:
        mem = self._get(session_id)
        if mem.lease_owner == owner:
            mem.lease_owner = None
            mem.lease_expires = 0.0

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        found = self._get(session_id).checkpoints.get(checkpoint_id)
        return copy.deepcopy(found.data) if found is not None else None

    async def restore_checkpoint(
        self, session_id: str, checkpoint_id: str, *, lease_owner: str | None = None
    ) -> SessionRecord | None:
        mem = self._get(session_id)
        found = mem.checkpoints.get(checkpoint_id)
        if found is None:
            return None
        if lease_owner is not None and mem.lease_owner != lease_owner:
            raise ConcurrencyError(f"Session {session_id}: the run lost its lease.", session_id=session_id)
        record = mem.record
        invocation_id = str(found.data.get("invocation_id") or record.invocation_id)
        mem.events.append(
            rewind_event(
                checkpoint_id=checkpoint_id, invocation_id=invocation_id, current=record.state, restored=found.state
            )
        )
        wanted = {r.id: r for r in found.pending}
        for wire in [w for w in mem.pending if w not in wanted]:
            mem.pending.pop(wire).status = "cancelled"
        for wire, then in wanted.items():
            if wire not in mem.pending:
                reopened = replace(then, status="pending", response=None, decided_by=None, decided_at=None)
                mem.interrupts.append(reopened)
                mem.pending[wire] = reopened
                mem.latest[wire] = reopened
        mem.deliveries = []
        record.state = copy.deepcopy(found.state)
        record.checkpoint = copy.deepcopy(found.data)
        record.checkpoint_id = checkpoint_id
        record.status = SessionStatus.WAITING
        record.invocation_id = invocation_id
        record.output = None
        record.error = None
        record.version += 1
        record.updated_at = time.time()
        return replace(record, state=dict(record.state))
