"""One AG-UI run of a workflow session, as the stream of AG-UI events it sends (AG-UI 1.0 §Runs).

The request never runs the engine: it subscribes to the session's progress group
(:class:`~.progress.Progress`), stores what the client sent, queues the session's run like every
door (``workflow_sessions.services.enqueue_run``: the ``run_session`` task, on a worker) and
streams the run as the worker reports it, mapped by an :class:`~.mapping.EventMapper`
(:mod:`.live`).

Order of a run: RUN_STARTED (``protocolVersion`` 1.0); then, for a known thread, the bounded wait
for another run of the session to end (a ``run_end`` message, or ``REVIEWCONSOLE["AGUI_LEASE_WAIT"]``
seconds and one look at the lease: else ``session_busy``), a checkpoint restore
(``forwardedProps.checkpointId``: never of a closed session, never reopening an interrupt decided
outside the thread), the ``resume`` entries or the new user message; the events stored since the
client's last run (what a reviewer's decision in the inbox led to), each node path as a step;
STATE_SNAPSHOT; the live run (node runs, text delta by delta, events, as the worker's messages
arrive); the stored events of the run that no message brought (messages are at most once; the
store is the truth, and no event is sent twice: ids are tracked); CUSTOM ``request_info`` per
pending interrupt, CUSTOM ``workflow_output`` when the session completed, CUSTOM ``status``;
RUN_FINISHED with outcome ``success`` (with ``result``), ``interrupt`` or ``cancelled``, or
RUN_ERROR (a :class:`~.errors.Refusal` code, or ``run_failed``).

The live part ends when a ``run_end`` message finds the session settled (no run holds it, none is
due). When no message comes for ``AGUI_LEASE_WAIT`` seconds the store is looked at once: settled,
the run ends as above; else RUN_ERROR ``session_busy`` (retryable: the run goes on in the worker,
a dead worker's session is picked up by the lease sweep, and the next request catches up). A
client that disconnects stops nothing but its stream. Forwarded props other than ``checkpointId``
reach the workflow as ``ctx.metadata["forwarded_props"]`` (AG-UI ``context`` items as
``ctx.metadata["agui"]["context"]``), never a model's prompt.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunAgentInput,
    RunErrorEvent,
    RunStartedEvent,
)
from ag_ui.encoder import EventEncoder
from django.utils import timezone
from pydantic_core import PydanticSerializationError

from engine import (
    Event,
    InterruptRecord,
    InterruptsPendingError,
    SessionBusyError,
    SessionClosedError,
    VersionMismatchError,
    WorkflowDataError,
)

from .. import json_input
from ..api.models import ApiClient
from ..workflow_sessions.services import (
    new_session_id,
    pending_interrupts,
    runs_wait_in_queue,
    session_message,
)
from ..workflows import WorkflowSpec
from . import services
from .answers import decider
from .arrivals import arrives, supersede, while_waiting
from .detached import Detached
from .errors import Refusal
from .hops import hop
from .live import lease_wait, live, outcome_events
from .mapping import EventMapper
from .models import AguiThread
from .progress import Progress
from .resume import SUBMITTED, apply_resume
from .rewinds import Rewind, rewind

__all__ = ["stream_run"]

logger = logging.getLogger("reviewconsole.agui")

UNSTORABLE = "The input holds a NUL character, an unpaired surrogate or a number out of range, which cannot be stored."

_enqueues: set[asyncio.Task[Any]] = set()  # an enqueue outlives a disconnected client; keep it referenced


async def stream_run(*, client: ApiClient, spec: WorkflowSpec, run: RunAgentInput) -> AsyncIterator[str]:
    """The SSE frames (``data: <json>\\n\\n``) of one run; never raises. A client that leaves
    stops nothing but its stream (:class:`~.detached.Detached`: what it sent is stored anyway)."""
    encoder = EventEncoder()
    stored = asyncio.Event()  # set by ``_stream`` once what the client sent is stored and the run queued
    events = Detached(_run(client, spec, run, stored), stored)
    try:
        yield _run_started(encoder, run)
        async for event in events:
            yield encoder.encode(event)
    except Refusal as refusal:
        logger.info("AG-UI run %s of thread %s refused: %s", run.run_id, run.thread_id, refusal.code)
        yield encoder.encode(RunErrorEvent(message=refusal.message, code=refusal.code))
    except Exception:
        logger.exception("AG-UI run %s of thread %s failed", run.run_id, run.thread_id)
        yield encoder.encode(RunErrorEvent(message=Refusal("internal_error").message, code="internal_error"))
    finally:
        events.release()


def _run_started(encoder: EventEncoder, run: RunAgentInput) -> str:
    """The RUN_STARTED frame echoing the client's ``threadId`` and ``runId``. An id holding an
    unpaired surrogate (``"\\ud800"``: valid JSON, refused by ``_run`` as ``input_invalid``) is
    echoed JSON-escaped, as sent: pydantic cannot serialise it (``PydanticSerializationError``)."""
    event = RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id, protocol_version="1.0")
    try:
        return encoder.encode(event)
    except PydanticSerializationError:
        return f"data: {json.dumps(event.model_dump(by_alias=True), separators=(',', ':'))}\n\n"


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


async def _run(
    client: ApiClient, spec: WorkflowSpec, run: RunAgentInput, stored: asyncio.Event
) -> AsyncGenerator[BaseEvent, None]:
    try:  # before anything reads or writes the database with it
        json_input.check_storable(run.model_dump())
    except json_input.UnstorableValueError:
        raise Refusal("input_invalid", UNSTORABLE) from None
    raw = run.forwarded_props if isinstance(run.forwarded_props, dict) else {}
    props = {k: v for k, v in raw.items() if k != "checkpointId"}
    checkpoint_id = raw.get("checkpointId")
    message = _last_user_message(run)
    metadata = _metadata(run, props)
    if message is not None and checkpoint_id is None and not run.resume:
        # Maybe a new thread: its session's id is made and its progress joined first (before the
        # session exists, so before its run), then the thread is read or started in one call.
        session_id = new_session_id()
        async with Progress(session_id) as progress:
            thread, start = await _open_thread(client, spec, run, message, session_id, metadata)
            if start is not None:
                async for event in _stream(thread, run, progress, metadata, stored, start):
                    yield event
                return
    else:
        thread, _ = await _open_thread(client, spec, run)
    if thread is None:
        if checkpoint_id is not None or run.resume:
            raise Refusal("checkpoint_unknown" if checkpoint_id is not None else "interrupt_unknown")
        raise Refusal("input_missing")
    if spec.on_arrival == "supersede" and await arrives(thread, run, message, checkpoint_id):
        thread = await supersede(client, thread, message)
        async with Progress(thread.session_id) as progress:
            async for event in _stream(thread, run, progress, metadata, stored):
                yield event
        return
    async with Progress(thread.session_id) as progress:  # joined before anything is queued
        found = await _wait_for_lease(progress, thread)
        start = await _continue_thread(client, thread, run, message, checkpoint_id, metadata, spec.on_arrival, found)
        async for event in _stream(thread, run, progress, metadata, stored, start):
            yield event


Start = tuple[list[Event], dict[str, Any], bool]
"""What a stream starts from: the stored events the client missed, the session's state, and
whether the run is queued already."""


async def _stream(
    thread: AguiThread,
    run: RunAgentInput,
    progress: Progress,
    metadata: dict[str, Any],
    stored: asyncio.Event,
    start: Start | None = None,
) -> AsyncIterator[BaseEvent]:
    """Catch up, queue the run (``stored`` is set then: what the client sent is stored and the
    run queued), stream it, catch up on what no message brought, say the outcome."""
    session_id = thread.session_id
    if start is None:
        start = (*await hop(services.stream_start)(session_id, thread.last_seq), False)
    caught, state, queued = start
    if not queued:
        _enqueue(session_id, metadata)  # the run starts while the client is sent what it missed
    stored.set()
    for event in EventMapper(track_state=False).replay(caught):
        yield event
    sent = {event.id for event in caught}  # ids of the stored events the client has now
    mapper = EventMapper(state)
    yield mapper.snapshot()
    yield CustomEvent(name="status", value={"status": "running", "sessionId": session_id})
    stored: list[services.Outcome] = []
    async for event in live(progress, mapper, sent, thread, stored):
        yield event
    [outcome] = stored
    for event in mapper.replay([event for event in outcome.events if event.id not in sent]):  # closes what is open
        yield event
    async for event in outcome_events(thread, run, outcome):
        yield event


async def _open_thread(
    client: ApiClient,
    spec: WorkflowSpec,
    run: RunAgentInput,
    message: tuple[str, Any] | None = None,
    session_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[AguiThread | None, Start | None]:
    """The known thread (its definition still deployed) and None; or, given ``message``, the new
    thread started and what its stream starts from, its run queued when queuing is only a stored
    row (``runs_wait_in_queue``); or (None, None). One hop (``services.thread_open``)."""
    start = None
    here = runs_wait_in_queue()
    if message is not None:
        message_id, data = message
        start = {
            "data": data,
            "message_id": message_id,
            "session_id": session_id,
            "queue_run": metadata if here else None,
        }
    try:  # session_start validates the input; a refused one leaves nothing stored
        thread, begun = await hop(services.thread_open)(
            client=client, workflow=spec.name, thread_id=run.thread_id, start=start
        )
    except WorkflowDataError:
        raise Refusal("input_invalid") from None
    except VersionMismatchError:  # the definition the session started (and paused) under is gone
        raise Refusal("version_retired") from None
    return thread, None if begun is None else (*begun, here)


Found = tuple[list[Event], dict[str, Any], list[InterruptRecord], dict[str, dt.datetime]]
"""``services.stream_continue``: the stored events the client missed, the state, the pending
interrupts and their due times."""


async def _wait_for_lease(progress: Progress, thread: AguiThread) -> Found:
    """What a known thread's stream starts from (``services.stream_continue``), once no other run
    holds the session: at once, or when its ``run_end`` message finds the lease free, or after
    ``REVIEWCONSOLE["AGUI_LEASE_WAIT"]`` seconds and one more look.

    Raises:
        Refusal: ``session_busy`` when the lease is still held after the wait.
    """
    read = hop(services.stream_continue)
    if (found := await read(thread.session_id, thread.last_seq)) is not None:
        return found
    loop = asyncio.get_running_loop()
    deadline = loop.time() + lease_wait()
    while True:  # the other run's progress is skipped: the store has what it stored
        message = await progress.receive(deadline - loop.time())
        if message is None or any(item.get("kind") == "run_end" for item in message.get("items", [])):
            if (found := await read(thread.session_id, thread.last_seq)) is not None:
                return found
            if message is None:
                raise Refusal("session_busy")


async def _continue_thread(
    client: ApiClient,
    thread: AguiThread,
    run: RunAgentInput,
    message: tuple[str, Any] | None,
    checkpoint_id: Any,
    metadata: dict[str, Any],
    on_arrival: str = "reject",
    found: Found | None = None,
) -> Start:
    """Rewind, then read what the client missed, then store the answers or the next message.
    A rewind the thread made already (the same ``runId`` and request: :mod:`.rewinds`) arriving
    again is neither rewound nor answered again: the stream shows where the session is now.

    A new message while the session waits on interrupts follows ``on_arrival``: ``reject`` is
    ``interrupts_pending`` (naming the session and the interrupt); ``queue`` keeps it as the
    thread's next message (``services.thread_queue``), fed once the review is decided, and the
    run ends with the interrupts still pending (``supersede`` is handled before: ``arrivals.supersede``).

    Answers queue the run as soon as they commit (before the inbox hears of them), so it is
    queued already when this returns (``Start``'s flag). ``found``: what the stream starts from,
    read once the lease was free (:func:`_wait_for_lease`); read again after a rewind."""
    if checkpoint_id is None:
        return await _take_input(client, thread, run, message, metadata, None, on_arrival, found)
    rewound = await rewind(client, thread, run, checkpoint_id, message, on_arrival)
    try:
        found = None if rewound.restored else found
        start = await _take_input(client, thread, run, message, metadata, rewound, on_arrival, found)
    except BaseException:
        await rewound.abandon(client)
        raise
    if not rewound.again:
        await rewound.done()
    return start


async def _take_input(
    client: ApiClient,
    thread: AguiThread,
    run: RunAgentInput,
    message: tuple[str, Any] | None,
    metadata: dict[str, Any],
    rewound: Rewind | None,
    on_arrival: str,
    found: Found | None,
) -> Start:
    """Read what the client missed, then store the answers or the next message (after a rewind:
    its answers, or a new message the workflow queues while waiting; the same rewind made
    already stores nothing)."""
    session_id = thread.session_id
    if found is None and (found := await hop(services.stream_continue)(session_id, thread.last_seq)) is None:
        raise Refusal("session_busy")  # a run took the session since the lease was free
    caught, state, pending, due = found
    queued = False
    here = runs_wait_in_queue()  # queued in the answers' transaction; else by the stream
    if rewound is not None and rewound.again:  # nothing is stored: the stream shows where the session is
        return caught, state, False
    if run.resume:
        applied = await apply_resume(
            session_id,
            run.resume,
            pending=pending,
            due=due,
            decided_by=decider(client),
            now=timezone.now(),
            override_claims=client.may_override_claims,
            queue_run=metadata if here else None,
        )
        queued = here and applied == SUBMITTED
    elif pending and (rewound is None or (message is not None and message[0] != thread.last_message_id)):
        if await while_waiting(client, thread, message, pending, on_arrival):  # else it raised
            return caught, state, False
    elif message is not None and message[0] != thread.last_message_id and rewound is None:
        try:
            await session_message(session_id, message[1])
        except WorkflowDataError:
            raise Refusal("input_invalid") from None
        except SessionBusyError:  # the thread's first run has not taken the session yet
            raise Refusal("session_busy") from None
        except SessionClosedError:  # cancelled: nothing runs again
            raise Refusal("session_closed") from None
        except InterruptsPendingError:  # the run paused on an interrupt since ``pending`` was read
            pending = await pending_interrupts(session_id)
            if not pending:  # and it was answered meanwhile: the session is about to run again
                raise Refusal("session_busy") from None
            if await while_waiting(client, thread, message, pending, on_arrival):  # else it raised
                return caught, state, False
    if message is not None and not (run.resume and message[0] != thread.last_message_id):
        # a new message sent with answers is not this run's input: the next run takes it (its
        # workflow's ``on_arrival`` while the session waits), so it is not noted as taken
        await hop(services.thread_update)(thread, message_id=message[0])
    return caught, state, queued


def _enqueue(session_id: str, metadata: dict[str, Any]) -> None:
    """Queue the session's run off the request's thread and context, without waiting for it (a
    backend that runs tasks at once, as the test suite's does, runs it there while we stream)."""
    work = hop(services.run_enqueue, thread_sensitive=False)(session_id, metadata)
    task = asyncio.get_running_loop().create_task(work, context=contextvars.Context())
    _enqueues.add(task)
    task.add_done_callback(_enqueues.discard)
