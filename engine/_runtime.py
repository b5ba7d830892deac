"""One run of one session: live state, the interrupt registry and atomic commits.

A :class:`RunSession` exists while a runner holds a session's lease. Every activation's
:class:`~engine.Context` points at it. It applies events to the live state as they are emitted,
streams them to the run's listener, opens interrupts, and writes progress to the store with a
checkpoint (see :meth:`RunSession.commit` and :meth:`RunSession.flush`). It is internal: hosts
use :class:`~engine.Runner`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from typing import TYPE_CHECKING, Any

from ._errors import EngineError
from ._events import REQUEST_INPUT_FUNCTION, Event, new_id
from ._interrupts import RequestInput
from ._listener import Listener, RunListener, as_listener
from ._state import TEMP_PREFIX, split_delta
from ._store import Commit, InterruptRecord, SessionRecord, SessionStatus, Store

if TYPE_CHECKING:
    from ._context import Context
    from ._node import BaseNode
    from ._slot import Slot

__all__ = ["CHECKPOINT_FORMAT", "RunSession"]

CHECKPOINT_FORMAT = 1
"""Version of the checkpoint layout; bumped when it changes incompatibly."""


def _drop_temp_keys(event: Event) -> None:
    actions = event.actions
    if actions is None or not actions.state_delta:
        return
    for key in actions.state_delta:
        if key.startswith(TEMP_PREFIX):
            actions.state_delta = {k: v for k, v in actions.state_delta.items() if not k.startswith(TEMP_PREFIX)}
            return


class RunSession:
    """The live side of a session during one run (internal)."""

    def __init__(
        self,
        *,
        store: Store,
        record: SessionRecord,
        invocation_id: str,
        shared_state: dict[str, Any],
        pending: list[InterruptRecord],
        lease_owner: str | None,
        metadata: dict[str, Any] | None = None,
        listener: Listener | None = None,
        model: Any = None,
    ) -> None:
        self.store = store
        self.session_id = record.id
        self.user_id = record.user_id
        self.app_name = record.app_name
        self.version = record.version
        self.invocation_id = invocation_id
        self.state: dict[str, Any] = {**shared_state, **record.state}
        self.metadata: dict[str, Any] = {**record.metadata, **(metadata or {})}
        self.registry: dict[str, InterruptRecord] = {r.id: r for r in pending}
        self.lease_owner = lease_owner
        self.listener: RunListener | None = as_listener(listener)
        self.model = model
        self.lease_ttl: float | None = None
        self.root_node: BaseNode | None = None
        self.root_slot: Slot | None = None
        self.checkpoint_id = record.checkpoint_id
        self._opened: list[InterruptRecord] = []
        self._cancelled: list[str] = []
        self._consumed: list[int] = []
        self._writing = False
        """True while a write is under way (writes happen one at a time, see :meth:`_write`)."""
        self._write_waiters: collections.deque[asyncio.Future[None]] | None = None
        """Writes waiting for their turn, oldest first (made when one first waits)."""
        self._batch: list[Event] = []
        self._dirty = False
        self._soon: asyncio.Future[None] | None = None
        self._soon_planned = False
        self._closed = False
        self.committed_events: list[Event] = []
        self.committed_state: dict[str, Any] = dict(record.state)
        """Session keys as stored after the last write (a running branch's changes not included)."""
        self.written_checkpoint: dict[str, Any] | None = record.checkpoint
        """The checkpoint as stored by the last write (at first, the one the run started from)."""
        self.written = False
        """Whether this run wrote anything yet."""

    # -- events ------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Apply an emitted event to the live state and pass it to the listener."""
        if event.actions is not None and event.actions.state_delta:
            self.state.update(event.actions.state_delta)
        if self.listener is not None:
            self.listener.on_event(event)

    def node_started(self, path: str, name: str) -> None:
        """Tell the listener that the activation at ``path`` (of node ``name``) starts or resumes."""
        if self.listener is not None:
            self.listener.on_node_start(path, name)

    def node_ended(self, path: str, status: str) -> None:
        """Tell the listener that the activation at ``path`` stopped (see :class:`~engine.NodeStatus`)."""
        if self.listener is not None:
            self.listener.on_node_end(path, status)

    # -- interrupts --------------------------------------------------------------------------

    def open_interrupt(
        self,
        ctx: Context,
        request: RequestInput,
        *,
        kind: str,
        function_name: str = REQUEST_INPUT_FUNCTION,
        tool_call: dict[str, Any] | None = None,
        call_id: str | None = None,
        emit: bool = True,
    ) -> str:
        """Register a pending interrupt raised in ``ctx`` and (by default) emit its call event.

        Returns the wire id. Re-raising an id this activation already waits on (a rerun node
        asking again) reuses the pending interrupt and emits nothing.
        """
        local_id = request.interrupt_id or call_id or new_id()
        for wire_id, rec in self.registry.items():
            if rec.local_id == local_id and rec.path == ctx.node_path and rec.status == "pending":
                if wire_id not in ctx.interrupt_ids:
                    ctx.interrupt_ids.append(wire_id)
                return wire_id
        wire_id = call_id or local_id
        if wire_id in self.registry:
            wire_id = f"{local_id}~{new_id()[:8]}"
        schema = request.schema_json()
        record = InterruptRecord(
            id=wire_id,
            session_id=self.session_id,
            kind=kind,
            path=ctx.node_path,
            local_id=local_id,
            function_name=function_name,
            branch=ctx.branch,
            message=request.message,
            payload=request.payload,
            response_schema=schema,
            tool_call=tool_call,
            metadata=dict(request.metadata),
            invocation_id=self.invocation_id,
        )
        self.registry[wire_id] = record
        self._opened.append(record)
        ctx.interrupt_ids.append(wire_id)
        if emit:
            args = {
                "interruptId": wire_id,
                "message": request.message,
                "payload": request.payload,
                "response_schema": schema,
            }
            call = {"id": wire_id, "name": function_name, "args": args}
            content = {"role": "model", "parts": [{"function_call": call}]}
            ctx.emit(Event.model_validate({"content": content, "long_running_tool_ids": [wire_id], "node_info": {}}))
        return wire_id

    def register_interrupt(self, record: InterruptRecord, ctx: Context) -> None:
        """Register an interrupt whose call event the caller emits itself (tools, confirmations)."""
        self.registry[record.id] = record
        self._opened.append(record)
        ctx.interrupt_ids.append(record.id)

    def discard_interrupt(self, wire_id: str) -> None:
        """Drop an interrupt opened by this run and not committed yet (a failed attempt's)."""
        record = self.registry.get(wire_id)
        if record is not None and any(r is record for r in self._opened):
            del self.registry[wire_id]
            self._opened = [r for r in self._opened if r is not record]

    def close_interrupt(self, wire_id: str) -> None:
        """Forget an interrupt that was answered (the store already marked it resolved)."""
        self.registry.pop(wire_id, None)

    def cancel_interrupt(self, wire_id: str) -> None:
        """Cancel a pending interrupt the run no longer waits on."""
        if self.registry.pop(wire_id, None) is not None:
            self._cancelled.append(wire_id)

    @property
    def opened(self) -> list[InterruptRecord]:
        """Interrupts this run opened and has not written yet."""
        return self._opened

    def consume(self, ids: list[int]) -> None:
        """Mark stored answers (by their :attr:`~engine.StoredAnswer.id`) as applied by this run; stored with
        the next commit."""
        self._consumed.extend(ids)

    # -- persistence -------------------------------------------------------------------------

    def checkpoint(self) -> dict[str, Any]:
        """The resumable position of the run: the root activation and everything under it."""
        root = self.root_slot.to_json(self.root_node) if self.root_slot is not None and self.root_node else None
        return {"format": CHECKPOINT_FORMAT, "invocation_id": self.invocation_id, "root": root}

    async def commit(self, events: list[Event]) -> None:
        """Record progress: ``events`` and the current checkpoint are written as soon as the run yields.

        The write happens at the next :meth:`flush`: the one every node, model call and tool runs
        first (so a completed step is stored before anything that could act on the world starts),
        or the one scheduled here for the next turn of the event loop (so progress and new
        interrupts are stored while other branches keep running), or the run's :meth:`finish`.
        Steps that follow one another without yielding share one transaction. ``temp:`` state
        keys are removed from the events first: they live in this run's state only and are never
        stored (ADK ``sessions/base_session_service.py``).
        """
        for event in events:
            if event.actions is not None:
                _drop_temp_keys(event)
        self._batch.extend(events)
        self._dirty = True
        if not self._soon_planned:
            self._soon_planned = True
            asyncio.get_running_loop().call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        # Runs at the next turn of the event loop; most of the time the next step has already
        # written everything (it flushes before it starts), and nothing is left to do.
        self._soon_planned = False
        if self._dirty and not self._closed and (self._soon is None or self._soon.done()):
            self._soon = asyncio.ensure_future(self.flush())

    async def flush(self) -> None:
        """Write what :meth:`commit` recorded, if anything.

        Raises:
            ConcurrencyError: the session moved on or the lease was lost.
        """
        if self._dirty:
            await self._write(SessionStatus.RUNNING)

    async def finish(
        self,
        events: list[Event],
        *,
        status: str,
        pause: bool = False,
        output: Any = None,
        error: dict[str, Any] | None = None,
        keep_checkpoint: bool = False,
    ) -> SessionRecord:
        """Write everything recorded plus ``events`` with the run's final status, atomically.

        ``keep_checkpoint`` (a failure): the stored checkpoint stays the last one written, the
        position a retry resumes from (:meth:`engine.Runner.retry`); when this run wrote nothing
        yet, the answers it took are left unapplied so that the retry takes them again.

        Raises:
            ConcurrencyError: the session moved on or the lease was lost.
        """
        await self.commit(events)
        if keep_checkpoint and not self.written:
            self._consumed = []
        checkpoint = self.written_checkpoint if keep_checkpoint else None
        record = await self._write(status, pause=pause, output=output, error=error, checkpoint=checkpoint)
        await self.close()
        return record

    async def close(self) -> None:
        """Settle the scheduled flush (a failure there shows again in the run's own writes)."""
        self._closed = True
        soon, self._soon = self._soon, None
        if soon is not None:
            if not soon.done():
                soon.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await soon

    async def _write(
        self,
        status: str,
        *,
        pause: bool = False,
        output: Any = None,
        error: dict[str, Any] | None = None,
        checkpoint: dict[str, Any] | None = None,
    ) -> SessionRecord:
        if self._writing:
            await self._wait_to_write()
        else:
            self._writing = True
        try:
            events, self._batch, self._dirty = self._batch, [], False
            state = self.committed_state
            for event in events:
                delta = event.actions.state_delta if event.actions is not None else None
                if delta:
                    state.update(split_delta(delta)[0])
            commit = Commit(
                events=events,
                checkpoint=checkpoint if checkpoint is not None else self.checkpoint(),
                status=status,
                expected_version=self.version,
                lease_owner=self.lease_owner,
                invocation_id=self.invocation_id,
                opened=self._opened,
                cancelled=self._cancelled,
                consumed=self._consumed,
                pause=pause,
                output=output,
                error=error,
                lease_ttl=self.lease_ttl,
                state=state,
            )
            self._opened, self._cancelled, self._consumed = [], [], []
            record = await self.store.commit(self.session_id, commit)
            self.version = record.version
            self.checkpoint_id = record.checkpoint_id
            self.written_checkpoint, self.written = commit.checkpoint, True
            self.committed_events.extend(events)
            return record
        finally:
            if self._write_waiters:
                self._pass_write_on()
            else:
                self._writing = False

    # One write at a time, first come first served: asyncio.Lock's rule, without its coroutine
    # and object per write (the run's own writes never wait; a flush scheduled by commit() may).

    async def _wait_to_write(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._write_waiters is None:
            self._write_waiters = collections.deque()
        self._write_waiters.append(waiter)
        try:
            await waiter  # set by _pass_write_on, which hands the turn over (_writing stays True)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._pass_write_on()  # handed the turn just as it was cancelled: hand it on
            elif waiter in self._write_waiters:
                self._write_waiters.remove(waiter)
            raise

    def _pass_write_on(self) -> None:
        while self._write_waiters:
            waiter = self._write_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._writing = False
