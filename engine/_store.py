"""The store protocol: what the runner needs from a store (``InMemoryStore`` is in ``_memory_store``).

A store keeps sessions (state, status, the latest checkpoint, a version counter and a run lease),
their append-only events, their interrupts and the answers submitted to them. The runner talks to
it through :class:`Store` only; the console implements it on the Django ORM.

Guarantees every implementation gives (tests run the same suite over each):

- ``commit`` is atomic: events, state changes, checkpoint, opened interrupts and consumed answers
  are stored together or not at all; it fails with :class:`~engine.ConcurrencyError` when the
  session's ``version`` is not ``expected_version`` (another writer got there first).
- ``commit`` never leaves a session ``waiting`` with nothing to resume it: a commit with status
  ``waiting`` after which the session has no pending interrupt, no stored answer left to apply
  and no user message awaited (:func:`awaits_message`) raises :class:`~engine.StuckSessionError`
  and stores nothing. The runner re-derives such a waiting point from the checkpoint instead
  (an answered interrupt the checkpoint still waits on gets its stored answer again).
- ``submit_answers`` is first-wins: an interrupt that is no longer pending raises
  :class:`~engine.AlreadyDecidedError` naming who decided it and when; nothing is stored.
- ``acquire_lease`` (and ``open_run``, which also reads what a run needs) gives at most one live
  run per session; a lease expires after ``ttl`` seconds so that a crashed worker's session can
  be picked up again.
- ``restore_checkpoint`` rewinds an open session to one of its pause checkpoints without deleting
  anything: the events stay, a rewind event (:func:`rewind_event`) is appended. It never revives
  a closed session nor re-opens an interrupt decided by anyone but the rewinder.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum, nonmember
from typing import Any, Protocol

from ._events import Event, EventActions, NodeInfo

__all__ = [
    "Answer",
    "AnswerGuard",
    "Commit",
    "Decision",
    "InterruptRecord",
    "RunLoad",
    "SessionRecord",
    "SessionStatus",
    "Store",
    "StoredAnswer",
    "awaits_message",
    "rewind_event",
]


class SessionStatus(StrEnum):
    """Values of :attr:`SessionRecord.status`: the one list of a session's statuses (the console's
    model takes its choices from it). A ``str`` enum: each member equals its value, which is what
    stores keep."""

    NEW = "new"
    RUNNING = "running"
    WAITING = "waiting"
    """Paused on one or more pending interrupts (or a task agent awaiting a message)."""
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    CLOSED = nonmember(frozenset({COMPLETED, FAILED, CANCELLED}))
    """The statuses of an ended session (not a member): nothing runs again."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What a host records with an answer: the decision's kind (``approve``, ``reject``,
    ``revise``, ``answer``, ``timeout``…), the decider's reason, an edit's unified diff, and the
    host's id of the deciding user (None for systems). The engine stores it, never reads it."""

    kind: str = "answer"
    reason: str = ""
    edit_diff: str = ""
    user_id: int | None = None


class AnswerGuard(Protocol):
    """A host's extra rule for taking an answer (e.g. the inbox's claim and due time).

    :meth:`Store.submit_answers` calls :meth:`check` for each final answer inside the answer's
    transaction, before its conditional update; it raises (any exception) to refuse the answer,
    and nothing is stored."""

    def check(self, session_id: str, interrupt_id: str) -> None: ...


@dataclass(slots=True)
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


@dataclass(slots=True)
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

    @property
    def args_digest(self) -> str:
        """The digest of the tool call's arguments as shown (``metadata["args_digest"]``; see
        :mod:`engine._digest`), or ``""`` for interrupts that ask about no tool call."""
        return str(self.metadata.get("args_digest") or "")


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
class StoredAnswer(Answer):
    """An :class:`Answer` stored and not yet applied by a run; ``id`` is the store's, and orders
    a session's stored answers (:attr:`Commit.consumed` names the ones a commit applied)."""

    id: int = field(kw_only=True)


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
    """Ids of the stored answers (:class:`StoredAnswer`) this commit applies."""
    pause: bool = False
    """True when the run stops waiting: the checkpoint is kept as a resumable checkpoint."""
    lease_ttl: float | None = None
    """Extend the writer's lease by this many seconds from now."""
    output: Any = None
    error: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    """The session's state (session keys) after this commit, when the writer knows it; a store may
    write it instead of applying the events' deltas to what it read."""


@dataclass
class RunLoad:
    """What a run needs, read in one go by :meth:`Store.open_run` (it holds the lease then)."""

    record: SessionRecord
    pending: list[InterruptRecord]
    answers: list[StoredAnswer]
    shared_state: dict[str, Any]


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
        decisions: Mapping[str, Decision] | None = None,
        guard: AnswerGuard | None = None,
    ) -> None:
        """Store answers and their user event atomically; first answer wins per interrupt.

        ``decisions`` (by interrupt id; default ``Decision()``) are kept with the answers;
        ``guard.check(session_id, interrupt_id)`` runs for each final answer before it is taken
        (its exception refuses the whole batch; nothing is stored).
        """
        ...

    async def take_answers(self, session_id: str) -> list[StoredAnswer]:
        """The session's stored answers no commit has applied yet, in stored order (taking them
        does not apply them)."""
        ...

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool: ...

    async def release_lease(self, session_id: str, owner: str) -> None: ...

    async def open_run(self, session_id: str, owner: str, ttl: float) -> RunLoad | None:
        """Take the lease (as :meth:`acquire_lease`) and read the session, its pending interrupts,
        its stored answers not yet applied and its shared state; None when another run holds the lease."""
        ...

    async def close_run(self, session_id: str, owner: str) -> bool:
        """Release the lease (as :meth:`release_lease`); True when stored answers are waiting, which
        an answer stored while the run held the lease leaves behind."""
        ...

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None: ...

    async def restore_checkpoint(
        self,
        session_id: str,
        checkpoint_id: str,
        *,
        lease_owner: str | None = None,
        decided_by: str | None = None,
    ) -> SessionRecord | None:
        """Rewind the session to the pause checkpoint ``checkpoint_id``, atomically.

        Afterwards the session waits at that checkpoint: its checkpoint and ``checkpoint_id`` are
        that pause's, its state is the state as of that pause, and the interrupts pending then
        are pending again under the same wire ids (re-opened if they were decided since);
        interrupts opened later are cancelled and stored answers not yet applied are dropped.
        Nothing is deleted: a :func:`rewind_event` carrying the state changes is appended.
        Returns None (and changes nothing) when the session has no such checkpoint.

        Only an open session can be rewound, and a decision is final for everyone but its own
        decider: an interrupt to re-open whose newest record is ``resolved`` must have been decided
        by ``decided_by`` (the rewinder, compared with the ``decided_by`` its answers were
        submitted under; None matches answers stored without one), and no interrupt opened after the
        checkpoint may have been decided by anyone else (going back past it would undo it). One
        ``cancelled`` (by the engine or an earlier rewind: nobody decided it) may always be
        re-opened. The checks are made in the rewind's own transaction, before anything changes.

        Raises:
            SessionNotFoundError: no such session.
            ConcurrencyError: ``lease_owner`` is given and does not hold the lease.
            SessionClosedError: the session is completed, failed or cancelled; nothing changed.
            CheckpointDecidedError: an interrupt to re-open, or one opened after the checkpoint,
                was decided by someone other than ``decided_by`` (``details``: ``interrupt_id``,
                ``decided_by``, ``decided_at``); nothing changed.
        """
        ...


def awaits_message(checkpoint: dict[str, Any] | None) -> bool:
    """True when the checkpoint's root waits for the user's next message (a task-mode agent)."""
    root = (checkpoint or {}).get("root") or {}
    return bool(root.get("awaiting_message"))


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
