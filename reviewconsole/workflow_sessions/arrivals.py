"""Input that arrives while a session of the same key is still open: the workflow's ``on_arrival``.

LangSmith's "multitask strategies" (reject, enqueue, interrupt) as this console applies them. A
door names the key the input belongs to: a webhook endpoint's ``thread_key`` (a JSON pointer
into the body or a header), the API's ``correlation_key`` on ``POST /api/v1/sessions``, an AG-UI
``threadId`` (whose session is the thread's, ``agui/``). A session is *open* while it is new,
running or waiting; for an AG-UI thread, while it waits on an interrupt. Then
``WorkflowSpec.on_arrival`` decides:

- ``reject`` (the default): nothing is stored; the door answers 409 ``session_waiting`` naming
  the open session and its pending interrupts (AG-UI: RUN_ERROR ``interrupts_pending``).
- ``queue``: the input is kept (an :class:`~.models.Arrival`, checked against the workflow's
  input first); the door answers 202 ``status: "queued"`` with the ``arrival_id`` and the
  session it waits behind.
- ``supersede``: the open session is cancelled (its inbox items become *superseded*: a decision
  on them is 409) and the input starts a new session of the key; 202 with the new session
  (``superseded``: the ids cancelled).

Queued input is started, oldest first and one at a time, once the session it waits behind no
longer waits on a review: it completed, failed or was cancelled, or (an AG-UI thread) waits for
the user's next message. For a key of a webhook or the API it starts a new session of the key
(so the key's sessions run one after another); for an AG-UI thread it is the thread's next
message (:func:`.services.session_message`). :func:`arrivals_release` does it, called when a run
of a session ends (``tasks.run_session``) and when one is cancelled (``services.session_cancel``);
each arrival is claimed by a conditional UPDATE, so it starts once. One that can no longer start
(its thread's session was cancelled, its input no longer fits a new version) is kept as
``refused`` with the error's code. Every outcome is audited (``session.arrival``).

Input queued behind a session that ended without its release running (the release failed) is
started by the next arrival of the key, before it: the order holds. Arrivals of one key are
serialised by an advisory lock on the key on PostgreSQL (also when no session of it exists yet) and
by locking the key's open sessions (``SELECT … FOR UPDATE``; SQLite's ``IMMEDIATE`` transactions
serialise every write), so two at once are both kept, in order. ``supersede`` refuses (409
``session_busy``, retry) while a decision on the open session is stored but not yet applied:
cancelling then would discard it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from engine import EngineError, SessionBusyError, SessionStatus

from ..audit.services import audit_record
from ..workflows import UnknownWorkflowError, get
from .engine_calls import call
from .input_check import check_input
from .models import Answer, Arrival, ArrivalStatus, ArrivalTarget, Interrupt, InterruptStatus, WorkflowSession
from .runners import runner_for
from .services import enqueue_run, session_cancel, session_message, session_start

__all__ = [
    "OPEN",
    "ArrivalResult",
    "SessionWaitingError",
    "arrival_queue_message",
    "arrivals_release",
    "release_stranded",
    "session_arrive",
]

logger = logging.getLogger("reviewconsole.runs")

OPEN = (SessionStatus.NEW.value, SessionStatus.RUNNING.value, SessionStatus.WAITING.value)
"""The statuses of a session that is still open for its key."""


class SessionWaitingError(Exception):
    """``on_arrival="reject"``: a session of the key is open (409 ``session_waiting``); nothing stored.

    ``details``: ``session_id``, ``pending`` (its pending interrupts' wire ids), ``correlation_key``."""

    code = "session_waiting"

    def __init__(self, session: WorkflowSession, pending: list[str]) -> None:
        waits = f"waits for review of {', '.join(pending)}" if pending else "is still running"
        self.message = (
            f"Session {session.id} of this key {waits}; this workflow refuses new input until it ends. "
            "Nothing was stored."
        )
        super().__init__(self.message)
        self.details = {"session_id": session.id, "pending": pending, "correlation_key": session.correlation_key}


@dataclass(frozen=True)
class ArrivalResult:
    """What became of an input: ``outcome`` ``started``, ``queued`` or ``superseded``; ``session``
    the session started (or, queued, the one it waits behind); ``arrival`` the kept input when
    queued; ``superseded`` the ids of the sessions cancelled."""

    outcome: str
    session: WorkflowSession
    arrival: Arrival | None = None
    superseded: list[str] = field(default_factory=list)


def _pending(session_id: str) -> list[str]:
    rows = Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING).order_by("id")
    return list(rows.values_list("interrupt_id", flat=True))


def _audit(actor: str, session: WorkflowSession, policy: str, outcome: str, **detail: Any) -> None:
    audit_record(
        action="session.arrival",
        actor=actor,
        target=session,
        detail={"policy": policy, "outcome": outcome, "correlation_key": session.correlation_key, **detail},
    )


def arrival_rejected(exc: SessionWaitingError, *, actor: str, request: HttpRequest | None = None) -> None:
    """Audit a refused arrival (``session.arrival``, outcome ``rejected``, on the open session);
    the door calls it once its transaction rolled back."""
    audit_record(
        action="session.arrival",
        actor=actor,
        target_type="workflow_sessions.workflowsession",
        target_id=exc.details["session_id"],
        request=request,
        detail={"policy": "reject", "outcome": "rejected", **exc.details},
    )


@transaction.atomic
def session_arrive(
    *, workflow: str, data: Any, user_id: str, correlation_key: str = "", metadata: dict[str, Any] | None = None
) -> ArrivalResult:
    """Start a session of ``workflow`` with ``data`` unless one of ``correlation_key`` is open;
    then apply the workflow's ``on_arrival`` (see the module docstring). ``user_id`` is who sent it
    (``webhook:<slug>``, ``client:<name>``), also the audit's actor.

    Raises:
        SessionWaitingError: ``reject``, and a session of the key is open (409 ``session_waiting``).
        UnknownWorkflowError: no such workflow.
        engine.WorkflowDataError: ``data`` does not fit the workflow's input; nothing is stored.
        engine.SessionBusyError: ``supersede``, and a run holds the open session right now (retry).
    """
    key = correlation_key[:200]
    if not key:
        return ArrivalResult("started", session_start(workflow=workflow, data=data, user_id=user_id, metadata=metadata))
    check_input(runner_for(workflow), data)  # a bad input is refused now, under any policy
    _lock_key(workflow, key)
    open_ = list(
        WorkflowSession.objects.select_for_update()
        .filter(workflow=workflow, correlation_key=key, status__in=OPEN)
        .order_by("created_at", "id")
    )
    behind = Arrival.objects.filter(
        workflow=workflow, correlation_key=key, target=ArrivalTarget.NEW_SESSION, status=ArrivalStatus.QUEUED
    )
    if not open_ and (older := behind.order_by("id").first()) is not None:
        open_ = [_start_queued(older)]  # a release left undone (it failed): the older input goes first
    if not open_:
        session = session_start(workflow=workflow, data=data, user_id=user_id, metadata=metadata, correlation_key=key)
        return ArrivalResult("started", session)
    policy, waiting = get(workflow).on_arrival, open_[0]
    if policy == "queue":
        arrival = Arrival.objects.create(
            workflow=workflow,
            correlation_key=key,
            session=waiting,
            target=ArrivalTarget.NEW_SESSION,
            data=data,
            user_id=user_id,
            metadata=metadata or {},
        )
        _audit(user_id, waiting, policy, "queued", arrival=arrival.pk, pending=_pending(waiting.id))
        return ArrivalResult("queued", waiting, arrival)
    if policy == "supersede":
        if Answer.objects.filter(session__in=open_, applied_at__isnull=True).exists():
            # A decision is stored but not yet applied: cancelling now would discard it.
            raise SessionBusyError("A decision on the open session is being applied; send the input again shortly.")
        for row in open_:
            call(session_cancel(row, reason="Superseded: newer input arrived for the same key."))
        shown = {**(metadata or {}), "supersedes_session": waiting.id}
        session = session_start(workflow=workflow, data=data, user_id=user_id, metadata=shown, correlation_key=key)
        superseded = [row.id for row in open_]
        _audit(user_id, session, policy, "superseded", superseded=superseded)
        return ArrivalResult("superseded", session, superseded=superseded)
    raise SessionWaitingError(waiting, _pending(waiting.id))


def _lock_key(workflow: str, key: str) -> None:
    """Serialise the arrivals of one key until the transaction ends, even when no session of it
    exists yet to lock (two first arrivals would each start one): PostgreSQL's transaction-level
    advisory lock on the key's hash. SQLite's ``IMMEDIATE`` transactions serialise every write."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"arrival\x1f{workflow}\x1f{key}"])


def _start_queued(arrival: Arrival) -> WorkflowSession:
    """Start ``arrival`` (queued for a new session of its key) now, in the caller's transaction;
    the session another arrival's transaction started for it, when that one claimed it first."""
    claimed = Arrival.objects.filter(pk=arrival.pk, status=ArrivalStatus.QUEUED)
    if not claimed.update(status=ArrivalStatus.STARTED, started_at=timezone.now()):
        arrival.refresh_from_db()
        return arrival.started_session or arrival.session
    started = _start(arrival, arrival.session)
    Arrival.objects.filter(pk=arrival.pk).update(started_session=started)
    _audit(arrival.user_id, started, "queue", "started", arrival=arrival.pk, waited_behind=arrival.session_id)
    return started


def arrival_queue_message(*, session: WorkflowSession, data: Any, user_id: str, metadata: dict[str, Any]) -> Arrival:
    """Keep ``data`` as the next message of ``session`` (an AG-UI thread waiting on a review,
    ``on_arrival="queue"``), fed once the review is decided; audited. It is checked against the
    workflow's input now, as a new invocation would check it (a chat agent waiting for its user
    takes any text, which that check lets through too), so a bad message is refused at once and
    nothing is queued; it is checked again when fed (``Runner.start``), and one refused then (its
    workflow's version changed meanwhile) is kept as ``refused`` with the error's code.

    Raises:
        engine.WorkflowDataError: ``data_invalid``, naming the fields (``input_check.input_refusal``).
    """
    check_input(runner_for(session.workflow), data)
    arrival = Arrival.objects.create(
        workflow=session.workflow,
        correlation_key=session.correlation_key,
        session=session,
        target=ArrivalTarget.MESSAGE,
        data=data,
        user_id=user_id,
        metadata=metadata,
    )
    _audit(user_id, session, "queue", "queued", arrival=arrival.pk, pending=_pending(session.id))
    return arrival


def _still_waiting(session: WorkflowSession) -> bool:
    """Whether ``session`` is running or still waits on a review (or on an answer's run)."""
    if session.status in (SessionStatus.NEW, SessionStatus.RUNNING):
        return True
    if session.status != SessionStatus.WAITING:
        return False
    if Answer.objects.filter(session_id=session.id, applied_at__isnull=True).exists():
        return True
    return Interrupt.objects.filter(session_id=session.id, status=InterruptStatus.PENDING).exists()


def _next(session: WorkflowSession) -> Arrival | None:
    mine = Q(session=session, target=ArrivalTarget.MESSAGE)
    if session.correlation_key:
        mine |= Q(workflow=session.workflow, correlation_key=session.correlation_key, target=ArrivalTarget.NEW_SESSION)
    return Arrival.objects.filter(mine, status=ArrivalStatus.QUEUED).order_by("id").first()


def _queued_behind(session_id: str) -> bool:
    """Whether any input is queued behind ``session_id`` (what :func:`_next` would find): one
    round trip on two indexes, in plain SQL as it runs after every run of every session."""
    quote, arrival, session = connection.ops.quote_name, Arrival._meta, WorkflowSession._meta
    a_table, s_table = quote(arrival.db_table), quote(session.db_table)
    a_session, a_target, a_status, a_workflow, a_key = (
        quote(arrival.get_field(name).column) for name in ("session", "target", "status", "workflow", "correlation_key")
    )
    s_id, s_workflow, s_key = (quote(session.get_field(name).column) for name in ("id", "workflow", "correlation_key"))
    sql = (
        f"SELECT 1 FROM {a_table} WHERE {a_session} = %s AND {a_target} = %s AND {a_status} = %s "  # noqa: S608 (names from the models, values as parameters)
        f"UNION ALL SELECT 1 FROM {a_table} AS a JOIN {s_table} AS s ON s.{s_id} = %s "
        f"WHERE s.{s_key} <> '' AND a.{a_workflow} = s.{s_workflow} AND a.{a_key} = s.{s_key} "
        f"AND a.{a_target} = %s AND a.{a_status} = %s LIMIT 1"
    )
    queued = ArrivalStatus.QUEUED.value
    params = [session_id, ArrivalTarget.MESSAGE.value, queued, session_id, ArrivalTarget.NEW_SESSION.value, queued]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() is not None


def _start(arrival: Arrival, session: WorkflowSession) -> WorkflowSession:
    if arrival.target == ArrivalTarget.MESSAGE:
        call(session_message(session.id, arrival.data))
        enqueue_run(session.id, metadata=arrival.metadata or None)
        return session
    return session_start(
        workflow=arrival.workflow,
        data=arrival.data,
        user_id=arrival.user_id,
        metadata=arrival.metadata,
        correlation_key=arrival.correlation_key,
    )


def release_stranded(limit: int = 100) -> int:
    """Release input left queued behind a session that no longer runs (its run's release was lost:
    a crash between the run's end and :func:`arrivals_release`); the recovery sweep calls it.
    Returns how many sessions it released input of (at most ``limit`` looked at)."""
    behind = (
        Arrival.objects.filter(status=ArrivalStatus.QUEUED, session__isnull=False)
        .exclude(session__status__in=(SessionStatus.NEW.value, SessionStatus.RUNNING.value))
        .values_list("session_id", flat=True)
        .distinct()[:limit]
    )
    return sum(1 for session_id in list(behind) if arrivals_release(session_id) is not None)


def arrivals_release(session_id: str) -> Arrival | None:
    """Start the oldest input queued behind ``session_id`` once it no longer waits on a review
    (see the module docstring); returns the arrival handled, or None (nothing queued, still
    waiting, another session of the key is open, or another release took it). An arrival that
    cannot start is kept as ``refused`` with its error's code, and the next one is tried."""
    if not _queued_behind(session_id):  # the common case, after every run: nothing queued
        return None
    while True:
        with transaction.atomic():
            session = WorkflowSession.objects.select_for_update().filter(pk=session_id).first()
            if session is None or _still_waiting(session):
                return None
            arrival = _next(session)
            if arrival is None:
                return None
            if arrival.target == ArrivalTarget.NEW_SESSION and (
                WorkflowSession.objects.filter(
                    workflow=session.workflow, correlation_key=session.correlation_key, status__in=OPEN
                ).exists()
            ):
                return None  # the key's next session is open: the input waits behind that one
            claimed = Arrival.objects.filter(pk=arrival.pk, status=ArrivalStatus.QUEUED)
            if not claimed.update(status=ArrivalStatus.STARTED, started_at=timezone.now()):
                return None
            try:
                with transaction.atomic():
                    started = _start(arrival, session)
            except (EngineError, UnknownWorkflowError) as exc:  # e.g. its thread's session was cancelled
                code = exc.code if isinstance(exc, EngineError) else "workflow_unavailable"
                logger.info("Queued input %s for session %s cannot start: %s", arrival.pk, session_id, code)
                Arrival.objects.filter(pk=arrival.pk).update(status=ArrivalStatus.REFUSED, error=code)
                _audit(arrival.user_id, session, "queue", "refused", arrival=arrival.pk, error=code)
                continue
            Arrival.objects.filter(pk=arrival.pk).update(started_session=started)
            _audit(arrival.user_id, started, "queue", "started", arrival=arrival.pk, waited_behind=session.id)
            arrival.started_session = started
            return arrival
