"""One pass of a run over the root node: what :meth:`Runner.run_pending` does under its lease.

:func:`run_once` applies a run's stored answers and messages to the root's checkpoint slot,
executes the root (:func:`execute_root`), offers answers stored while it ran, and commits the
outcome (:func:`finish_root`): a pause, a completion or a failure.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ._context import Context, Outcome
from ._errors import EngineError, VersionMismatchError
from ._events import Event, NodeInfo
from ._listener import Listener
from ._recovery import fail_stuck, lost_answers, stored_answers
from ._retry import REOPEN_ON_RETRY
from ._runtime import RunSession
from ._slot import Slot
from ._store import InterruptRecord, RunLoad, SessionRecord, SessionStatus, awaits_message

if TYPE_CHECKING:  # the runner imports this module to run its passes
    from ._runner import Runner

__all__ = ["execute_root", "finish_root", "run_once"]

logger = logging.getLogger("engine")


async def run_once(
    runner: Runner,
    load: RunLoad,
    owner: str,
    metadata: dict[str, Any] | None,
    listener: Listener | None,
) -> tuple[SessionRecord, list[Event], list[InterruptRecord]]:
    """One pass of :meth:`Runner.run_pending` under the lease ``owner`` holds: apply ``load``'s
    stored answers and messages, run the root until it completes, fails or waits, and commit.

    Returns the session record after the pass, the events it committed and the interrupts
    pending then.

    Raises:
        VersionMismatchError: the session paused under another version of ``runner.app``.
    """
    record = load.record
    session_id = record.id
    checkpoint = record.checkpoint
    if record.status in SessionStatus.CLOSED or checkpoint is None:
        return record, [], load.pending
    stored = load.answers
    rederived: dict[str, Any] = {}
    if record.status == SessionStatus.WAITING and not stored:
        if load.pending or awaits_message(checkpoint):
            return record, [], load.pending
        # Waiting with nothing to resume it (stored before stores refused that): the
        # checkpoint names what the root waits on; answers stored for those are applied again.
        waited = list(Slot.from_json(checkpoint["root"]).interrupts)
        rederived = await stored_answers(runner.store, session_id, waited, set())
        if not rederived:
            return await fail_stuck(runner.store, record, owner, runner.app_name, waited), [], []
    if record.workflow_version != runner.version:
        raise VersionMismatchError(
            f"Session {session_id} paused under {runner.app_name} version {record.workflow_version!r}; "
            f"this runner has version {runner.version!r}.",
            session_version=record.workflow_version,
            runner_version=runner.version,
        )
    session = RunSession(
        store=runner.store,
        record=record,
        invocation_id=checkpoint["invocation_id"],
        shared_state=load.shared_state,
        pending=load.pending,
        lease_owner=owner,
        metadata=metadata,
        listener=listener,
        model=runner.model,
    )
    session.lease_ttl = runner.lease_ttl
    answers: dict[str, Any] = {}
    messages: list[Any] = []
    taken: list[int] = []
    for answer in stored:
        if not answer.interrupt_id:
            messages.append(answer.value)
        elif answer.interrupt_id in answers:
            continue  # a second update for the same call waits for the next pass
        else:
            answers[answer.interrupt_id] = answer.value
            if answer.final:
                session.close_interrupt(answer.interrupt_id)
        taken.append(answer.id)
    session.consume(taken)
    answers.update(rederived)
    slot = Slot.from_json(checkpoint["root"])
    session.root_node, session.root_slot = runner.app, slot
    try:
        outcome = await execute_root(runner, session, slot, answers, messages)
        tried = set(answers)
        while outcome.status == "waiting" and not outcome.awaiting_message:
            lost = await lost_answers(runner.store, session, outcome.interrupts, tried)
            if not lost:
                break
            tried.update(lost)
            events = slot.ctx.pending if slot.ctx is not None else []
            slot.record(runner.app, outcome, session)
            await session.commit(events)
            outcome = await execute_root(runner, session, slot, lost, [])
        record = await finish_root(runner, session, slot, outcome)
    finally:
        await session.close()
    return record, session.committed_events, list(session.registry.values())


async def execute_root(
    runner: Runner, session: RunSession, slot: Slot, answers: dict[str, Any], messages: list[Any]
) -> Outcome:
    """Deliver ``answers`` and ``messages`` to the root's ``slot`` and run the root node from it."""
    fresh = slot.status == "running" and slot.child is None
    if slot.status == "waiting":
        verdict = slot.deliver(runner.app, answers, messages, session)
        if verdict == "complete":
            slot.report_completed(f"{runner.app.name}@1", runner.app.name, session)
            return Outcome.completed(slot.answer_output())
        if verdict is None:
            return Outcome.waiting(list(slot.interrupts), awaiting_message=slot.awaiting_message)
    ctx = Context(
        session=session,
        node=runner.app,
        path=f"{runner.app.name}@1",
        run_id="1",
        node_input=slot.input,
        author=runner.app.name,
    )
    ctx.input_valid = True  # validated by start() before it was stored
    slot.bind(ctx, runner.app, fresh=fresh)
    return await runner.app.execute(ctx)


async def finish_root(runner: Runner, session: RunSession, slot: Slot, outcome: Outcome) -> SessionRecord:
    """Commit the root's ``outcome``: a pause, a completion, or a failure (an error event and the
    session's ``error`` dict, ``{"code", "message", "exception", ...}``; the checkpoint kept)."""
    ctx = slot.ctx
    events = ctx.pending if ctx is not None else []
    slot.record(runner.app, outcome, session)
    if outcome.status == "waiting":
        return await session.finish(events, status=SessionStatus.WAITING, pause=True)
    open_before = [wire for wire, rec in session.registry.items() if not any(rec is r for r in session.opened)]
    for wire in list(session.registry):
        session.cancel_interrupt(wire)
    if outcome.status == "completed":
        slot.child = slot.input = None
        slot.status = "completed"
        return await session.finish(events, status=SessionStatus.COMPLETED, output=outcome.output)
    error = outcome.error
    logger.error("Session %s failed", session.session_id, exc_info=error)
    code = error.code if isinstance(error, EngineError) else "node_failed"
    root_path = f"{runner.app.name}@1"
    path = error.details.get("node_path", root_path) if isinstance(error, EngineError) else root_path
    message = f"Node {path} failed."
    events.append(
        Event(
            author=runner.app.name,
            invocation_id=session.invocation_id,
            node_info=NodeInfo(path=path),
            error_code=code,
            error_message=message,
        )
    )
    detail: dict[str, Any] = error.to_dict() if isinstance(error, EngineError) else {"code": code, "message": message}
    detail["exception"] = repr(error)
    if open_before:
        detail[REOPEN_ON_RETRY] = open_before
    return await session.finish(events, status=SessionStatus.FAILED, error=detail, keep_checkpoint=True)
