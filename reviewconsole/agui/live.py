"""The live part of an AG-UI run's stream (:mod:`.runs`): the worker's progress messages mapped
to AG-UI events until the session is settled, then the events that say how it stands.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunAgentInput,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
)
from django.conf import settings

from engine import Event, SessionStatus

from . import services
from .errors import Refusal
from .hops import hop
from .interrupts import to_agui
from .mapping import EventMapper
from .models import AguiThread
from .progress import Progress

__all__ = ["lease_wait", "live", "map_item", "outcome_events"]


def lease_wait() -> float:
    """Seconds a stream waits for a progress message before it looks at the store:
    ``REVIEWCONSOLE["AGUI_LEASE_WAIT"]`` (default 30)."""
    return float(settings.REVIEWCONSOLE.get("AGUI_LEASE_WAIT", 30.0))


async def live(
    progress: Progress, mapper: EventMapper, sent: set[str], thread: AguiThread, out: list[services.Outcome]
) -> AsyncIterator[BaseEvent]:
    """The run's progress messages mapped to AG-UI events, until the session is settled; then
    ``out`` gets how it stands (``services.run_outcome``: the thread's stored events after its
    ``last_seq`` that are not in ``sent``, all now noted as sent, the record, the pending interrupts).

    ``sent`` (event ids the client has) grows by each complete event mapped; an event in it is
    skipped (its deltas too).

    Raises:
        Refusal: ``session_busy`` when no message came for ``AGUI_LEASE_WAIT`` seconds and the
            session is not settled.
    """
    run_outcome = hop(services.run_outcome)
    wait = lease_wait()
    while True:
        message = await progress.receive(wait)
        if message is None:
            if (found := await run_outcome(thread, frozenset(sent))) is None:
                raise Refusal("session_busy")
            out.append(found)
            return
        ended = False
        for item in message.get("items", []):
            ended = map_item(item, mapper, sent) or ended
        for event in mapper.drain():
            yield event
        # not settled: another run took the session (it applies what we stored); its end comes too
        if ended and (found := await run_outcome(thread, frozenset(sent))) is not None:
            out.append(found)
            return


def map_item(item: dict[str, Any], mapper: EventMapper, sent: set[str]) -> bool:
    """Feed one progress item (see :mod:`.progress`) to ``mapper``; True for ``run_end``."""
    kind = item.get("kind")
    if kind == "delta" and item["id"] not in sent:
        mapper.on_delta(item["id"], item["path"], item["text"])
    elif kind == "event":
        event = Event.from_json(item["event"])
        if event.id not in sent:
            sent.add(event.id)
            mapper.on_event(event)
    elif kind == "node_start":
        mapper.on_node_start(item["path"], item["name"])
    elif kind == "node_end":
        mapper.on_node_end(item["path"], item["status"])
    return kind == "run_end"


async def outcome_events(thread: AguiThread, run: RunAgentInput, outcome: services.Outcome) -> AsyncIterator[BaseEvent]:
    """Say how the session stands (its events up to ``outcome.events`` are noted as sent)."""
    session_id = thread.session_id
    record = outcome.record
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
        if pending := outcome.pending:
            interrupts = [to_agui(r, checkpoint_id=record.checkpoint_id, due=outcome.due.get(r.id)) for r in pending]
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
