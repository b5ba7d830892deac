"""One AG-UI run of a workflow session, as the stream of AG-UI events it sends (AG-UI 1.0 §Runs).

Order of a run: RUN_STARTED (``protocolVersion`` 1.0); then, for a known thread, the bounded wait
for another run's lease, a checkpoint restore (``forwardedProps.checkpointId``: never of a closed
session, never reopening an interrupt decided outside the thread), the ``resume`` entries or the
new user message; the events stored since the client's last run (what a
reviewer's decision in the inbox led to), each node path as a step; STATE_SNAPSHOT; the live run
(``Runner.run_pending`` with an :class:`~.mapping.EventMapper` as its listener, so text streams
delta by delta); CUSTOM ``request_info`` per pending interrupt, CUSTOM ``workflow_output`` when
the session completed, CUSTOM ``status``; RUN_FINISHED with outcome ``success`` (with ``result``),
``interrupt`` or ``cancelled``, or RUN_ERROR (a :class:`~.errors.Refusal` code, or ``run_failed``).

The live run is a task of its own: a client that disconnects does not stop it (it commits and
pauses as usual; the next request catches up). Forwarded props other than ``checkpointId`` reach
the workflow as ``ctx.metadata["forwarded_props"]`` (AG-UI ``context`` items as
``ctx.metadata["agui"]["context"]``), never a model's prompt.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
)
from ag_ui.encoder import EventEncoder
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.utils import timezone

from engine import (
    CheckpointDecidedError,
    Runner,
    RunResult,
    SessionBusyError,
    SessionClosedError,
    SessionStatus,
    UnknownCheckpointError,
    VersionMismatchError,
    WorkflowDataError,
)

from .. import json_input
from ..api.models import ApiClient
from ..workflow_sessions.runners import runner_for
from ..workflows import WorkflowSpec
from . import services
from .errors import Refusal
from .interrupts import to_agui
from .mapping import EventMapper
from .models import AguiThread
from .resume import apply_resume

__all__ = ["stream_run"]

logger = logging.getLogger("reviewconsole.agui")

UNSTORABLE = "The input holds a NUL character or a number out of range, which cannot be stored."

_running: set[asyncio.Task[Any]] = set()  # live runs outlive a disconnected client; keep them referenced


def _setting(name: str, default: float) -> float:
    return float(settings.REVIEWCONSOLE.get(name, default))


async def stream_run(*, client: ApiClient, spec: WorkflowSpec, run: RunAgentInput) -> AsyncIterator[str]:
    """The SSE frames (``data: <json>\\n\\n``) of one run; never raises."""
    encoder = EventEncoder()
    yield encoder.encode(RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id, protocol_version="1.0"))
    try:
        async for event in _run(client, spec, run):
            yield encoder.encode(event)
    except Refusal as refusal:
        logger.info("AG-UI run %s of thread %s refused: %s", run.run_id, run.thread_id, refusal.code)
        yield encoder.encode(RunErrorEvent(message=refusal.message, code=refusal.code))
    except Exception:
        logger.exception("AG-UI run %s of thread %s failed", run.run_id, run.thread_id)
        yield encoder.encode(RunErrorEvent(message=Refusal("internal_error").message, code="internal_error"))


def _last_user_message(run: RunAgentInput) -> tuple[str, Any] | None:
    """(id, input) of the newest user message: a JSON object when the text is one, else the text."""
    for message in reversed(run.messages):
        role = getattr(message, "role", None)
        if role != "user":
            continue
        content = getattr(message, "content", "")
        if not isinstance(content, str):
            content = "".join(getattr(part, "text", "") or "" for part in content)
        try:
            data = json_input.loads(content)
        except json_input.UnstorableValueError:
            raise Refusal("input_invalid", UNSTORABLE) from None
        except ValueError:
            data = content
        return message.id, data if isinstance(data, dict) else content
    return None


def _metadata(run: RunAgentInput, props: dict[str, Any]) -> dict[str, Any]:
    context = [item.model_dump(by_alias=True) for item in (run.context or [])]
    return {"forwarded_props": props, "agui": {"thread_id": run.thread_id, "run_id": run.run_id, "context": context}}


async def _run(client: ApiClient, spec: WorkflowSpec, run: RunAgentInput) -> AsyncIterator[BaseEvent]:
    try:  # before anything reads or writes the database with it
        json_input.check_storable(run.model_dump())
    except json_input.UnstorableValueError:
        raise Refusal("input_invalid", UNSTORABLE) from None
    runner = runner_for(spec.name)
    raw = run.forwarded_props if isinstance(run.forwarded_props, dict) else {}
    props = {k: v for k, v in raw.items() if k != "checkpointId"}
    checkpoint_id = raw.get("checkpointId")
    message = _last_user_message(run)
    thread = await sync_to_async(services.thread_get)(client=client, workflow=spec.name, thread_id=run.thread_id)
    if thread is None:
        if checkpoint_id is not None or run.resume:
            raise Refusal("checkpoint_unknown" if checkpoint_id is not None else "interrupt_unknown")
        thread = await _start_thread(runner, client, spec, run, message)
    else:
        record = await runner.store.get_session(thread.session_id)
        try:  # the definition the session started (and paused) under
            runner = runner_for(spec.name, record.workflow_version)
        except VersionMismatchError:
            raise Refusal("version_retired") from None
        await _wait_for_lease(thread.session_id)
        await _continue_thread(runner, client, thread, run, message, checkpoint_id)
    mapper = EventMapper(track_state=False)
    for event in mapper.replay(await runner.store.list_events(thread.session_id, after=thread.last_seq)):
        yield event
    record = await runner.store.get_session(thread.session_id)
    mapper = EventMapper(record.state)
    yield mapper.snapshot()
    yield CustomEvent(name="status", value={"status": "running", "sessionId": thread.session_id})
    async for event in _live(runner, thread.session_id, mapper, _metadata(run, props)):
        yield event
    async for event in _outcome(runner, thread, run):
        yield event


async def _start_thread(
    runner: Runner, client: ApiClient, spec: WorkflowSpec, run: RunAgentInput, message: tuple[str, Any] | None
) -> AguiThread:
    if message is None:
        raise Refusal("input_missing")
    message_id, data = message
    try:
        runner.app.validate_input(data)
    except WorkflowDataError:
        raise Refusal("input_invalid") from None
    return await sync_to_async(services.thread_start)(
        runner=runner, client=client, workflow=spec.name, thread_id=run.thread_id, data=data, message_id=message_id
    )


async def _wait_for_lease(session_id: str) -> None:
    """Wait (bounded: ``REVIEWCONSOLE["AGUI_LEASE_WAIT"]`` seconds) while another run holds the session."""
    deadline = time.monotonic() + _setting("AGUI_LEASE_WAIT", 30.0)
    while not await sync_to_async(services.lease_free)(session_id):
        if time.monotonic() > deadline:
            raise Refusal("session_busy")
        await asyncio.sleep(0.1)


def _decider(client: ApiClient) -> str:
    """Who the thread's answers are stored as (``decided_by``); a rewind may re-open only these."""
    return f"agui:{client.name}"


def _decided_message(exc: CheckpointDecidedError) -> str:
    """The refusal's message: which interrupt blocks the rewind, and who decided it when."""
    when = exc.details.get("decided_at")
    return (
        f"Interrupt {exc.details.get('interrupt_id')} was decided by {exc.details.get('decided_by') or 'someone else'}"
        + (f" at {when}" if when else "")
        + "; a decision made outside this thread is final, so the thread cannot be rewound to that checkpoint."
    )


async def _continue_thread(
    runner: Runner,
    client: ApiClient,
    thread: AguiThread,
    run: RunAgentInput,
    message: tuple[str, Any] | None,
    checkpoint_id: Any,
) -> None:
    session_id = thread.session_id
    if checkpoint_id is not None:
        record = await runner.store.get_session(session_id)
        if not (record.status == SessionStatus.WAITING and record.checkpoint_id == checkpoint_id):
            try:
                await runner.restore_checkpoint(session_id, str(checkpoint_id), decided_by=_decider(client))
            except UnknownCheckpointError:
                raise Refusal("checkpoint_unknown") from None
            except SessionClosedError:
                raise Refusal("session_closed") from None
            except CheckpointDecidedError as exc:
                raise Refusal("checkpoint_decided", _decided_message(exc)) from None
    pending = await runner.store.pending_interrupts(session_id)
    if run.resume:
        due = await sync_to_async(services.due_times)(session_id, pending)
        await apply_resume(
            runner,
            session_id,
            run.resume,
            pending=pending,
            due=due,
            decided_by=_decider(client),
            now=timezone.now(),
            override_claims=client.may_override_claims,
        )
    elif pending:
        raise Refusal("interrupts_pending")
    elif message is not None and message[0] != thread.last_message_id and checkpoint_id is None:
        try:
            await runner.start(session_id, message[1])
        except WorkflowDataError:
            raise Refusal("input_invalid") from None
        except SessionBusyError:  # the thread's first run has not taken the session yet
            raise Refusal("session_busy") from None
        except SessionClosedError:  # cancelled: nothing runs again
            raise Refusal("session_closed") from None
    if message is not None:
        await sync_to_async(services.thread_update)(thread, message_id=message[0])


async def _own_context(coro: Any) -> Any:
    async with ThreadSensitiveContext():  # its own ORM thread, independent of the request's
        return await coro


async def _live(
    runner: Runner, session_id: str, mapper: EventMapper, metadata: dict[str, Any]
) -> AsyncIterator[BaseEvent]:
    """Run the session with ``mapper`` listening; yield its events as they come."""
    queue: asyncio.Queue[BaseEvent | None] = asyncio.Queue()

    class Forward:
        def on_event(self, event: Any) -> None:
            mapper.on_event(event)
            self._flush()

        def on_node_start(self, path: str, name: str) -> None:
            mapper.on_node_start(path, name)
            self._flush()

        def on_node_end(self, path: str, status: str) -> None:
            mapper.on_node_end(path, status)
            self._flush()

        @staticmethod
        def _flush() -> None:
            for item in mapper.drain():
                queue.put_nowait(item)

    work = runner.run_pending(session_id, metadata=metadata, listener=Forward())
    task: asyncio.Task[RunResult] = asyncio.get_running_loop().create_task(
        _own_context(work), context=contextvars.Context()
    )
    _running.add(task)
    task.add_done_callback(_running.discard)
    task.add_done_callback(lambda _: queue.put_nowait(None))
    while (item := await queue.get()) is not None:
        yield item
    task.result()  # a failure of the run itself (not of a node) ends this request with RUN_ERROR
    mapper.close_all()
    for item in mapper.drain():
        yield item


async def _outcome(runner: Runner, thread: AguiThread, run: RunAgentInput) -> AsyncIterator[BaseEvent]:
    """Wait out a run that took the lease meanwhile, then say how the session stands now."""
    session_id = thread.session_id
    seen = await sync_to_async(services.session_seq)(session_id)
    record = await runner.store.get_session(session_id)
    if record.status == SessionStatus.RUNNING:  # a worker took it over (a decision in the inbox)
        await _wait_for_lease(session_id)
        for event in EventMapper(track_state=False).replay(await runner.store.list_events(session_id, after=seen)):
            yield event
        seen = await sync_to_async(services.session_seq)(session_id)
        record = await runner.store.get_session(session_id)
    await sync_to_async(services.thread_update)(thread, last_seq=seen)
    status = {"status": record.status, "sessionId": session_id, "checkpointId": record.checkpoint_id}
    if record.status == SessionStatus.FAILED:
        raise Refusal("run_failed")
    if record.status == SessionStatus.RUNNING:
        raise Refusal("session_busy")
    if record.status == SessionStatus.CANCELLED:
        yield CustomEvent(name="status", value=status)
        yield RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=RunFinishedCancelledOutcome())
        return
    if record.status == SessionStatus.WAITING:
        pending = await runner.store.pending_interrupts(session_id)
        if pending:
            due = await sync_to_async(services.due_times)(session_id, pending)
            interrupts = [to_agui(r, checkpoint_id=record.checkpoint_id, due=due.get(r.id)) for r in pending]
            for interrupt in interrupts:
                yield CustomEvent(name="request_info", value=interrupt.model_dump(mode="json", by_alias=True))
            yield CustomEvent(name="status", value=status)
            yield RunFinishedEvent(
                thread_id=run.thread_id, run_id=run.run_id, outcome=RunFinishedInterruptOutcome(interrupts=interrupts)
            )
            return
        status["awaitingMessage"] = True
    else:
        yield CustomEvent(name="workflow_output", value={"output": record.output})
    yield CustomEvent(name="status", value=status)
    yield RunFinishedEvent(
        thread_id=run.thread_id,
        run_id=run.run_id,
        result=record.output if record.status == SessionStatus.COMPLETED else None,
        outcome=RunFinishedSuccessOutcome(),
    )
