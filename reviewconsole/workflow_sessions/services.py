"""Services on sessions: start one, answer its interrupts, cancel it, retry a failed one, and
enqueue their runs.

Doors (webhooks, the API, AG-UI, the inbox, the admin) call these; they are the only code that
calls the engine's ``Runner`` for a door (the run itself is the ``run_session`` task).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest

from engine import (
    AlreadyDecidedError,
    AnswerGuard,
    Decision,
    InterruptNotReadyError,
    InterruptRecord,
    Runner,
    SessionRecord,
    UnknownInterruptError,
    WorkflowDataError,
)

from ..audit.services import audit_record
from . import store_sql
from .engine_calls import call, in_db
from .failure import failure_code, failure_message
from .input_check import check_input, input_refusal
from .models import Answer, Interrupt, InterruptStatus, WorkflowSession
from .runners import runner_for, runner_for_session
from .store import OrmStore
from .store_rows import already_decided, interrupt_record
from .tasks import run_session

__all__ = [
    "answer_waiting",
    "answers_submit",
    "check_runnable",
    "enqueue_run",
    "interrupt_answer",
    "interrupt_answer_sync",
    "interrupt_get",
    "new_session_id",
    "pending_interrupts",
    "pending_interrupts_sync",
    "runs_wait_in_queue",
    "session_cancel",
    "session_message",
    "session_record",
    "session_record_sync",
    "session_restore",
    "session_retry",
    "session_start",
]


def new_session_id() -> str:
    """A new session id of the shape the store gives (32 hex digits), for a door that names the
    session before it starts it (:func:`session_start`'s ``session_id``)."""
    return str(WorkflowSession._meta.pk.get_default())


def runs_wait_in_queue() -> bool:
    """True when :func:`enqueue_run` only stores the run's task for a worker to claim (the
    database backend, django-tasks-db): quick, so a door may queue it on the thread it streams
    from. False when the task backend runs a task as it is enqueued (Django's
    ``ImmediateBackend``, the test suite's): a door that must not wait for the run then queues it
    from a thread of its own."""
    return bool(run_session.get_backend().supports_defer)


def enqueue_run(session_id: str, *, metadata: dict[str, Any] | None = None) -> None:
    """Queue a run of the session (:func:`~.tasks.run_session`); ``metadata`` (JSON) reaches its
    nodes as ``ctx.metadata``.

    When queuing only stores the task (:func:`runs_wait_in_queue`), its row is written in the
    current transaction: it commits with what the run is for (a start, an answer) or rolls back
    with it, so a crash after the commit cannot lose the run, and the commit needs no second
    write. The console's worker is woken once it commits (``console.worker``). A backend that
    runs a task as it is enqueued gets it once the transaction commits (at once outside one),
    ``robust``: should that fail, the caller still gets its answer, since what it asked for was
    stored; recovery runs the session.

    Raises:
        django.db.Error: the task's row could not be written (the caller's transaction fails
            with it: nothing is stored).
    """
    args = (session_id,) if metadata is None else (session_id, metadata)
    if runs_wait_in_queue():
        run_session.enqueue(*args)
    else:
        transaction.on_commit(lambda: run_session.enqueue(*args), robust=True)


def _title(data: Any) -> str:
    if isinstance(data, dict):
        text = next((v for v in data.values() if isinstance(v, str)), json.dumps(data, ensure_ascii=False))
    else:
        text = str(data)
    return " ".join(text.split())[:200]


@transaction.atomic
def session_start(
    *,
    workflow: str,
    data: Any,
    user_id: str,
    metadata: dict[str, Any] | None = None,
    enqueue: bool = True,
    correlation_key: str = "",
    session_id: str | None = None,
) -> WorkflowSession:
    """Create a session of ``workflow`` with ``data`` as its first message and queue its run.

    The session's title is the first text of ``data`` (see ``_title``), whichever door started it.
    ``correlation_key`` (up to 200 characters) is kept on the session: a door that applies the
    workflow's ``on_arrival`` policy starts through :func:`.arrivals.session_arrive` instead.
    ``enqueue=False`` leaves the run to the caller (:func:`enqueue_run` once this commits), for a
    door that listens to the run's progress before it starts (AG-UI). ``session_id``: the new
    session's id, made beforehand by :func:`new_session_id` (AG-UI joins the session's progress
    group before the session exists); ``engine.ConcurrencyError`` when it is taken.

    Raises:
        UnknownWorkflowError: no such workflow.
        engine.WorkflowDataError: ``data`` does not fit the workflow's input schema
            (``details["errors"]`` lists the fields); nothing is stored.
    """
    runner = runner_for(workflow)
    check_input(runner, data)
    record = _store.create_session_sync(  # Runner.create_session's row, with the console's columns
        app_name=runner.app_name,
        user_id=user_id,
        metadata=metadata,
        session_id=session_id,
        workflow_version=runner.version,
        title=_title(data),
        correlation_key=correlation_key,
    )
    call(runner.start(record.id, data, record=record))
    if enqueue:
        enqueue_run(record.id)
    return WorkflowSession.objects.get(pk=record.id)


@transaction.atomic
def session_retry(
    *, session: WorkflowSession, user: AbstractBaseUser | AnonymousUser, request: HttpRequest | None = None
) -> WorkflowSession:
    """Run a failed session again from its last checkpoint (:meth:`engine.Runner.retry`); audited as ``session.retry``.

    Who may is the door's question (``inbox.permissions.require_retry_permission``).

    Raises:
        engine.SessionNotFailedError: the session has not failed (e.g. someone retried it first).
        engine.SessionBusyError: a run holds the session; try again.
        UnknownWorkflowError / engine.VersionMismatchError: its workflow (version) is gone.
    """
    error = session.error
    runner = runner_for_session(session)
    call(runner.retry(session.id, retried_by=user.get_username()))
    audit_record(
        action="session.retry",
        user=user,
        target=session,
        request=request,
        detail={"error_code": failure_code(error), "message": failure_message(error)},
    )
    enqueue_run(session.id)
    return WorkflowSession.objects.get(pk=session.id)


def _answered_meanwhile(session_id: str) -> AlreadyDecidedError | None:
    """The refusal for an answer that lost to the stored answer waiting for its run (if any)."""
    stored = (
        Answer.objects.filter(session_id=session_id, applied_at__isnull=True)
        .exclude(interrupt_id="")
        .order_by("-id")
        .first()
    )
    if stored is None:
        return None
    row = (
        Interrupt.objects.filter(session_id=session_id, interrupt_id=stored.interrupt_id)
        .exclude(status=InterruptStatus.PENDING)
        .order_by("-id")
        .first()
    )
    if row is None:
        return None
    return already_decided(row)


async def answer_waiting(session_id: str) -> bool:
    """True while an answer to the session is stored and no run has applied it yet."""
    return await in_db(store_sql.has_unapplied_answers)(session_id)


async def answers_submit(
    runner: Runner,
    session_id: str,
    answers: dict[Any, Any],
    *,
    decided_by: str | None = None,
    decisions: Mapping[str, Decision] | None = None,
    guard: AnswerGuard | None = None,
) -> list[InterruptRecord]:
    """``runner.submit`` for the doors: an answer for an interrupt not open yet while an earlier
    answer is stored but not yet applied is retryable, as while the session runs.

    An answer that names no interrupt ("the one pending") finding none pending because someone
    else's answer was just stored lost that race: it is refused as decided, naming who and when,
    not told to retry (a retry would answer the next interrupt, which its sender never saw).

    Raises:
        engine.AlreadyDecidedError: an answer naming no interrupt, and the pending one was
            answered meanwhile (409 ``interrupt_decided``, who and when).
        engine.InterruptNotReadyError: no such pending interrupt, and a stored answer waits for
            its run (409 ``interrupt_not_ready``, retry): the run may open it.
        Everything ``Runner.submit`` raises, and whatever ``guard.check`` raises.
    """
    try:
        return await runner.submit(session_id, answers, decided_by=decided_by, decisions=decisions, guard=guard)
    except UnknownInterruptError as exc:
        if not await answer_waiting(session_id):
            raise
        if all(key is None for key in answers):
            decided = await in_db(_answered_meanwhile)(session_id)
            if decided is not None:
                raise decided from None
        raise InterruptNotReadyError(
            "No such pending interrupt yet: an earlier answer is stored and not yet applied; "
            "retry once the session pauses again.",
            interrupt_id=exc.details.get("interrupt_id"),
            pending=exc.details.get("pending", []),
        ) from None


def _session_row(session_id: str) -> WorkflowSession:
    return WorkflowSession.objects.only("id", "workflow", "workflow_version").get(pk=session_id)


async def _session(session: WorkflowSession | str) -> WorkflowSession:
    if isinstance(session, WorkflowSession):
        return session
    return await in_db(_session_row)(session)


async def interrupt_answer(
    session: WorkflowSession | str,
    answers: dict[Any, Any],
    *,
    decided_by: str | None,
    decisions: Mapping[str, Decision] | None = None,
    guard: AnswerGuard | None = None,
) -> list[InterruptRecord]:
    """Store answers to ``session``'s pending interrupts (by wire id; ``None``: the only one) on
    the runner of the version it paused under; returns the interrupts answered. The caller
    enqueues the run (:func:`enqueue_run`) in its transaction.

    ``decisions``: what each answer stands for (kind, reason, edit diff, the deciding user);
    ``guard``: the door's own rule (the inbox's claim and due time), checked in the answer's
    transaction before its conditional UPDATE.

    Raises:
        WorkflowSession.DoesNotExist: no such session (given by id).
        UnknownWorkflowError / engine.VersionMismatchError: its workflow (version) is gone.
        Everything :func:`answers_submit` raises.
    """
    row = await _session(session)
    runner = runner_for_session(row)  # the version it paused under (H14)
    return await answers_submit(runner, row.id, answers, decided_by=decided_by, decisions=decisions, guard=guard)


def interrupt_answer_sync(
    session: WorkflowSession | str,
    answers: dict[Any, Any],
    *,
    decided_by: str | None,
    decisions: Mapping[str, Decision] | None = None,
    guard: AnswerGuard | None = None,
) -> list[InterruptRecord]:
    """:func:`interrupt_answer` from sync code, run on this thread in the caller's transaction
    (``engine_calls.call``)."""
    return call(interrupt_answer(session, answers, decided_by=decided_by, decisions=decisions, guard=guard))


async def _runner_of(session_id: str) -> Runner:
    """The runner of the version ``session_id`` started (and paused) under (H14)."""
    return runner_for_session(await _session(session_id))


_store = OrmStore()  # reads need no runner: every version's runner stores here


async def session_record(session_id: str, *, runnable: bool = False) -> SessionRecord:
    """The engine's record of ``session_id`` (status, state, checkpoint id, output, error), one query.

    Raises:
        engine.SessionNotFoundError: no such session.
        UnknownWorkflowError / engine.VersionMismatchError: with ``runnable``, when its workflow
            (the version it started under) is no longer deployed, so it cannot run again.
    """
    record = await _store.get_session(session_id)
    if runnable:
        check_runnable(record.app_name, record.workflow_version)
    return record


def check_runnable(workflow: str, version: str) -> None:
    """Check that the definition a session of ``workflow`` started (and paused) under, ``version``,
    is still deployed, so the session can run again (H14).

    Raises:
        UnknownWorkflowError: ``workflow`` is no longer registered.
        engine.VersionMismatchError: ``version`` is neither its current version nor a kept one.
    """
    runner_for(workflow, version)


def session_record_sync(session_id: str) -> SessionRecord:
    """:func:`session_record` (without ``runnable``) from sync code.

    Raises:
        engine.SessionNotFoundError: no such session.
    """
    return _store.get_session_sync(session_id)


async def pending_interrupts(session_id: str) -> list[InterruptRecord]:
    """The interrupts ``session_id`` waits on, in the order they opened (empty when none)."""
    return await _store.pending_interrupts(session_id)


def pending_interrupts_sync(session_id: str) -> list[InterruptRecord]:
    """:func:`pending_interrupts` from sync code."""
    return [interrupt_record(row) for row in store_sql.pending_interrupts(session_id)]


async def interrupt_get(session_id: str, interrupt_id: str) -> InterruptRecord | None:
    """The session's interrupt with wire id ``interrupt_id`` in any status (the newest asked under
    that id), or None when it never had one."""
    return await _store.get_interrupt(session_id, interrupt_id)


async def session_message(session_id: str, message: Any) -> SessionRecord:
    """Store ``message`` (str or JSON object) as the session's next input (:meth:`engine.Runner.start`:
    a new invocation, or the next turn of an agent waiting for the user). The caller enqueues
    the run (:func:`enqueue_run`).

    Raises:
        engine.WorkflowDataError: it does not fit the workflow's input schema; nothing is stored.
        engine.InterruptsPendingError: the session waits on interrupts.
        engine.SessionBusyError: an invocation is still running (or not yet taken by its run).
        engine.SessionClosedError: the session was cancelled.
        UnknownWorkflowError / engine.VersionMismatchError: its workflow (version) is gone.
    """
    runner = await _runner_of(session_id)
    try:
        return await runner.start(session_id, message)
    except WorkflowDataError as exc:  # the engine's, naming the root node: in the workflow's words
        raise input_refusal(exc) from exc


async def session_restore(session_id: str, checkpoint_id: str, *, decided_by: str | None) -> SessionRecord:
    """Rewind the session to one of its pause checkpoints (:meth:`engine.Runner.restore_checkpoint`):
    it waits there again, with the interrupts it had then; ``decided_by`` may re-open only its own
    decisions.

    Raises:
        engine.UnknownCheckpointError: no such pause checkpoint of the session.
        engine.SessionClosedError: the session ended (a closed session stays closed).
        engine.CheckpointDecidedError: an interrupt to re-open was decided by someone else
            (``details``: ``interrupt_id``, ``decided_by``, ``decided_at``).
        engine.SessionBusyError: a run holds the session.
        UnknownWorkflowError / engine.VersionMismatchError: its workflow (version) is gone.
    """
    return await (await _runner_of(session_id)).restore_checkpoint(session_id, checkpoint_id, decided_by=decided_by)


async def session_cancel(session: WorkflowSession | str, *, reason: str = "") -> SessionRecord:
    """Cancel ``session`` (:meth:`engine.Runner.cancel`): its pending interrupts are cancelled and
    nothing runs again; input queued behind it is released (:func:`.arrivals.arrivals_release`).

    Raises:
        engine.SessionClosedError: it already ended. engine.SessionBusyError: a run holds it, or
            a decision on it is stored and not yet applied (that decision stands; retry).
        UnknownWorkflowError / engine.VersionMismatchError: its workflow (version) is gone.
    """
    row = await _session(session)
    record = await runner_for_session(row).cancel(row.id, reason=reason)
    from .arrivals import arrivals_release  # a cycle: arrivals starts and cancels sessions through this module

    await in_db(arrivals_release)(row.id)
    return record


def session_cancel_sync(session: WorkflowSession | str, *, reason: str = "") -> SessionRecord:
    """:func:`session_cancel` from sync code, run on this thread in the caller's transaction
    (``engine_calls.call``); raises what it raises."""
    return call(session_cancel(session, reason=reason))
