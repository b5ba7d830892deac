"""The runner: start sessions, store answers, and run a session until it completes or pauses.

A run happens in three steps that hosts may split across processes:

1. :meth:`Runner.start` stores the user's message as the first event of a new invocation, with a
   checkpoint saying the root node is to run. Nothing runs yet.
2. :meth:`Runner.submit` validates answers to pending interrupts and stores them (first answer
   wins per interrupt) with a user event of function responses. Nothing runs yet.
3. :meth:`Runner.run_pending` takes the session's lease, loads the latest checkpoint and the
   stored answers, and runs until every live branch completes or waits. Progress is committed
   with a checkpoint after every node run, so a run that dies is picked up from its last
   checkpoint by the next ``run_pending`` (after the lease expires).

:meth:`Runner.run` and :meth:`Runner.resume` do 1+3 and 2+3 in one call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._answers import Answers, prepare_answers
from ._errors import (
    EngineError,
    SessionBusyError,
    SessionClosedError,
    UnknownCheckpointError,
)
from ._events import Content, Event, NodeInfo, new_id
from ._lease import keep_lease
from ._listener import Listener
from ._memory_store import InMemoryStore
from ._node import BaseNode, as_node
from ._retry import retry_failed
from ._root_run import run_once
from ._runtime import CHECKPOINT_FORMAT
from ._slot import Slot
from ._store import (
    Answer,
    AnswerGuard,
    Commit,
    Decision,
    InterruptRecord,
    SessionRecord,
    SessionStatus,
    Store,
)

__all__ = ["InterruptsPendingError", "RunResult", "Runner"]

_STARTS_BY_COMMIT = frozenset({SessionStatus.NEW, SessionStatus.COMPLETED, SessionStatus.FAILED})
"""Statuses whose start is one version-checked commit: a caller's record with one of them is used as it is."""


class InterruptsPendingError(EngineError):
    """A new message arrived while the session waits on interrupts; ``details["pending"]`` lists them."""

    code = "interrupts_pending"


@dataclass
class RunResult:
    """What a run left behind: the session record, this run's events and the pending interrupts."""

    session: SessionRecord
    events: list[Event] = field(default_factory=list)
    interrupts: list[InterruptRecord] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.session.status

    @property
    def output(self) -> Any:
        return self.session.output


def _message_content(message: Any) -> Content:
    if isinstance(message, Content):
        return message
    if isinstance(message, str):
        return Content.user_text(message)
    return Content.user_text(json.dumps(message, ensure_ascii=False, default=str))


def _message_input(message: Any) -> Any:
    if isinstance(message, Content):
        return message.text
    return message


class Runner:
    """Runs one app (a workflow, an agent or a single node) over a store.

    Args:
        app: the root node.
        store: where sessions live (default: a new :class:`~engine.InMemoryStore`).
        app_name: the name sessions are filed under (default: the root node's name).
        lease_ttl: seconds a run's lease lasts without a commit; a crashed run's session can be
            picked up after that.
        owner: a name for this runner in leases (default: random).
        model: the :class:`~engine.Model` for agents that name none.
    """

    def __init__(
        self,
        app: Any,
        store: Store | None = None,
        *,
        app_name: str | None = None,
        lease_ttl: float = 60.0,
        owner: str | None = None,
        model: Any = None,
    ) -> None:
        self.app: BaseNode = as_node(app)
        self.model = model
        self.store: Store = store if store is not None else InMemoryStore()
        self.app_name = app_name or self.app.name
        self.version = str(getattr(self.app, "version", ""))
        self.lease_ttl = lease_ttl
        self.owner = owner or f"runner-{new_id()[:8]}"

    # -- sessions ----------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        user_id: str = "user",
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionRecord:
        """Create an empty session for ``user_id`` under this runner's app and version."""
        return await self.store.create_session(
            app_name=self.app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            workflow_version=self.version,
            metadata=metadata,
        )

    async def start(self, session_id: str, message: Any, *, record: SessionRecord | None = None) -> SessionRecord:
        """Store ``message`` (str, JSON dict or :class:`~engine.Content`) as a new invocation's input.

        When a task-mode agent waits for the user's next message, the message goes to it instead
        and the invocation continues.

        A cancelled session takes no new message (nothing runs again); a completed or failed one
        starts a new invocation.

        ``record``: the session's record as the caller has it (e.g. from :meth:`create_session`),
        which spares reading it again when it says new, completed or failed: those starts end in
        a commit whose version check refuses a record the session has moved on from
        (:class:`~engine.ConcurrencyError`; nothing is stored). A record with any other status is
        read again (a message to a waiting task agent is stored without a version check).

        Raises:
            ValueError: ``record`` is another session's.
            ConcurrencyError: ``record`` was out of date; nothing is stored.
            WorkflowDataError: the message does not fit the root node's ``input_schema``.
            InterruptsPendingError: the session waits on interrupts; answer them first.
            SessionBusyError: an invocation is still running.
            SessionClosedError: the session was cancelled; nothing is stored.
        """
        if record is not None and record.id != session_id:
            raise ValueError(f"The record given is session {record.id}'s, not {session_id}'s.")
        if record is None or record.status not in _STARTS_BY_COMMIT:
            record = await self.store.get_session(session_id)
        if record.status == SessionStatus.CANCELLED:
            raise SessionClosedError(
                f"Session {session_id} was cancelled; nothing runs again.", session_id=session_id, status=record.status
            )
        if record.status == SessionStatus.WAITING:
            root = (record.checkpoint or {}).get("root", {})
            if root.get("awaiting_message"):
                content = _message_content(message)
                event = Event(
                    author="user",
                    invocation_id=record.invocation_id,
                    content=content,
                    node_info=NodeInfo(path=""),
                )
                await self.store.submit_answers(session_id, [Answer("", content.text)], event, decided_by=None)
                return await self.store.get_session(session_id)
            pending = await self.store.pending_interrupts(session_id)
            raise InterruptsPendingError(
                "The session is waiting on interrupts; answer them before sending a new message.",
                pending=[r.id for r in pending],
            )
        if record.status in (SessionStatus.RUNNING,):
            raise SessionBusyError("An invocation of this session is still running.", session_id=session_id)
        root_input = self.app.validate_input(_message_input(message))
        invocation_id = new_id()
        event = Event(
            author="user",
            invocation_id=invocation_id,
            content=_message_content(message),
            node_info=NodeInfo(path=""),
        )
        checkpoint = {
            "format": CHECKPOINT_FORMAT,
            "invocation_id": invocation_id,
            "root": Slot(status="running", run="1", input=root_input).to_json(self.app),
        }
        return await self.store.commit(
            session_id,
            Commit(
                events=[event],
                checkpoint=checkpoint,
                status=SessionStatus.RUNNING,
                expected_version=record.version,
                invocation_id=invocation_id,
                state=record.state,
            ),
        )

    async def submit(
        self,
        session_id: str,
        answers: Answers,
        *,
        decided_by: str | None = None,
        decisions: Mapping[str, Decision] | None = None,
        guard: AnswerGuard | None = None,
    ) -> list[InterruptRecord]:
        """Validate and store answers; return the interrupts they answer.

        ``answers`` maps interrupt ids to responses (a function response's ``response`` object,
        or a bare value sent as ``{"result": value}``), or is a user :class:`~engine.Content` of
        function responses. The key ``None`` answers the only pending interrupt. ``decided_by``,
        ``decisions`` (per interrupt id) and ``guard`` are handed to the store
        (:meth:`Store.submit_answers`); the guard's exception refuses the answer.

        Raises:
            AmbiguousAnswerError: an answer names no id while several interrupts are pending.
            UnknownInterruptError: an id names no pending interrupt (``details["pending"]``).
            AlreadyDecidedError: the interrupt was answered already (first answer wins).
            AnswerInvalidError: an answer fails the interrupt's schema; nothing is stored.
            InterruptNotReadyError: an id names no pending interrupt while a run of the session
                is going on, which may be about to open it (an answer that raced its pause):
                retryable; nothing is stored.
        """
        records, to_store, event = await prepare_answers(self.store, session_id, answers)
        await self.store.submit_answers(
            session_id, to_store, event, decided_by=decided_by, decisions=decisions, guard=guard
        )
        return records

    # -- running -----------------------------------------------------------------------------

    async def run(
        self,
        session_id: str,
        message: Any,
        *,
        metadata: dict[str, Any] | None = None,
        listener: Listener | None = None,
        record: SessionRecord | None = None,
    ) -> RunResult:
        """:meth:`start` (with ``record``, if given) then :meth:`run_pending`."""
        await self.start(session_id, message, record=record)
        return await self.run_pending(session_id, metadata=metadata, listener=listener)

    async def resume(
        self,
        session_id: str,
        answers: Answers,
        *,
        decided_by: str | None = None,
        metadata: dict[str, Any] | None = None,
        listener: Listener | None = None,
    ) -> RunResult:
        """:meth:`submit` then :meth:`run_pending`."""
        await self.submit(session_id, answers, decided_by=decided_by)
        return await self.run_pending(session_id, metadata=metadata, listener=listener)

    async def run_pending(
        self,
        session_id: str,
        *,
        metadata: dict[str, Any] | None = None,
        listener: Listener | None = None,
    ) -> RunResult:
        """Run whatever the session has to do: a new invocation, stored answers, a crashed run.

        Returns the state after the run. If another run holds the lease, returns at once with
        the current record: that run picks up stored answers before it lets go.

        ``metadata`` (host data such as AG-UI forwarded props) reaches nodes as ``ctx.metadata``
        and never a model's request. ``listener`` is told about events, streamed partial events
        and node runs as they happen: a :class:`~engine.RunListener`, or a callable taking each
        :class:`~engine.Event` (see :mod:`engine._listener`).

        Raises:
            VersionMismatchError: the session paused under another version of the app.
            ConcurrencyError: the run's lease could not be renewed (``details["reason"] ==
                "lease_lost"``); what it committed stays, and the next run resumes from there.
        """
        owner = f"{self.owner}:{new_id()[:8]}"
        events: list[Event] = []
        while True:
            load = await self.store.open_run(session_id, owner, self.lease_ttl)
            if load is None:
                record = await self.store.get_session(session_id)
                return RunResult(record, events, await self.store.pending_interrupts(session_id))
            try:
                # Renewed every ttl/3 while the run works, so a slow node keeps the session.
                work = run_once(self, load, owner, metadata, listener)
                record, ran, pending = await keep_lease(self.store, session_id, owner, self.lease_ttl, work)
                events.extend(ran)
            finally:
                # An answer stored while we held the lease found the lease taken; look again now
                # that it is released, so that no answer waits for a run that never comes.
                waiting = await self.store.close_run(session_id, owner)
            if record.status == SessionStatus.WAITING and waiting:
                continue
            return RunResult(record, events, pending)

    async def restore_checkpoint(
        self, session_id: str, checkpoint_id: str, *, decided_by: str | None = None
    ) -> SessionRecord:
        """Rewind an open session to one of its pause checkpoints (time travel; nothing is deleted).

        The session then waits where it waited at that pause: same state, same pending
        interrupts (same wire ids, re-opened if decided since), later interrupts cancelled,
        unapplied answers dropped; a rewind event is appended (see
        :meth:`engine.Store.restore_checkpoint`). Answer the interrupts as usual to go on.

        A closed session stays closed, and a decision is final for everyone but its decider:
        ``decided_by`` names the rewinder as its answers were submitted (:meth:`submit`'s
        ``decided_by``); an interrupt to re-open that was resolved under another ``decided_by``
        (a reviewer, another client, an expiry) refuses the rewind. Interrupts the rewinder
        answered itself, and cancelled ones, are re-opened.

        Raises:
            UnknownCheckpointError: the session has no pause checkpoint with that id (a
                checkpoint of another session is unknown too).
            SessionClosedError: the session is completed, failed or cancelled; nothing changed.
            CheckpointDecidedError: the rewind would re-open, or go back past, an interrupt
                decided by someone other than ``decided_by`` (``details``: ``interrupt_id``, ``decided_by``,
                ``decided_at``); nothing changed.
            SessionBusyError: a run holds the lease; try again.
        """
        owner = f"{self.owner}:{new_id()[:8]}"
        if not await self.store.acquire_lease(session_id, owner, self.lease_ttl):
            raise SessionBusyError("The session is running; try again.", session_id=session_id)
        try:
            record = await self.store.restore_checkpoint(
                session_id, checkpoint_id, lease_owner=owner, decided_by=decided_by
            )
        finally:
            await self.store.release_lease(session_id, owner)
        if record is None:
            raise UnknownCheckpointError("No such checkpoint in this session.", session_id=session_id)
        return record

    async def retry(self, session_id: str, *, retried_by: str | None = None) -> SessionRecord:
        """Put a failed session back to running from its last checkpoint; :meth:`run_pending` runs it.

        A failed run keeps the last checkpoint it wrote (the step that failed had not finished:
        it runs again, e.g. its model call is made again); the interrupts the failure cancelled
        are opened again under the same wire ids. A retry event (``custom_metadata``
        ``{engine.RETRY_KEY: {"error_code", "retried_by"}}``) is appended and the error is cleared.
        Nothing is deleted: the failure's events stay in the history.

        Raises:
            SessionNotFailedError: the session is not failed (``details["status"]``); nothing changed.
            SessionBusyError: a run holds the lease; try again.
        """
        return await retry_failed(
            self.store, session_id, owner=f"{self.owner}:{new_id()[:8]}", ttl=self.lease_ttl, retried_by=retried_by
        )

    async def cancel(self, session_id: str, *, reason: str = "") -> SessionRecord:
        """Cancel a session: pending interrupts are cancelled and nothing runs again.

        Raises:
            SessionClosedError: the session is already completed, failed or cancelled.
            SessionBusyError: a run holds the lease, or an answer is stored that no run has
                applied yet (the decision made first stands: cancelling would drop it); try again.
        """
        owner = f"{self.owner}:{new_id()[:8]}"
        if not await self.store.acquire_lease(session_id, owner, self.lease_ttl):
            raise SessionBusyError("The session is running; try again.", session_id=session_id)
        try:
            record = await self.store.get_session(session_id)
            if record.status in SessionStatus.CLOSED:
                raise SessionClosedError(f"Session {session_id} is already {record.status}.", status=record.status)
            if await self.store.take_answers(session_id):
                raise SessionBusyError(
                    "A decision on the session is stored and waits for its run; try again once it is applied.",
                    session_id=session_id,
                )
            pending = await self.store.pending_interrupts(session_id)
            event = Event(
                author=self.app_name,
                invocation_id=record.invocation_id,
                node_info=NodeInfo(path=""),
                error_code="cancelled",
                error_message=reason or "The session was cancelled.",
            )
            return await self.store.commit(
                session_id,
                Commit(
                    events=[event],
                    checkpoint=record.checkpoint,
                    status=SessionStatus.CANCELLED,
                    expected_version=record.version,
                    lease_owner=owner,
                    invocation_id=record.invocation_id,
                    cancelled=[r.id for r in pending],
                    state=record.state,
                ),
            )
        finally:
            await self.store.release_lease(session_id, owner)
