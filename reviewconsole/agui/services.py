"""Threads and sessions for the AG-UI door (sync ORM work; the stream calls these on a thread: ``hops.hop``).

A thread is a workflow session (AG-UI ``threadId``): :func:`thread_get` finds the session of
``(client, workflow, threadId)``; :func:`thread_start` makes one for a new thread
(``workflow_sessions.services.session_start`` and the thread's row in one transaction).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

import engine
from engine import InterruptRecord, SessionRecord, SessionStatus

from ..api.models import ApiClient
from ..audit.services import audit_record
from ..inbox.models import Item, ItemStatus
from ..thread_connections import recycle_connections
from ..workflow_sessions.arrivals import arrival_queue_message
from ..workflow_sessions.event_rows import COLUMNS, event_json
from ..workflow_sessions.models import Answer as StoredAnswer
from ..workflow_sessions.models import Event, WorkflowSession
from ..workflow_sessions.services import (
    check_runnable,
    enqueue_run,
    new_session_id,
    pending_interrupts_sync,
    session_cancel_sync,
    session_record_sync,
    session_start,
)
from .answers import decider
from .errors import Refusal
from .models import AguiThread

__all__ = [
    "Outcome",
    "arrival_refused",
    "due_times",
    "lease_free",
    "run_enqueue",
    "run_outcome",
    "settled_events",
    "stored_events",
    "stream_continue",
    "stream_start",
    "thread_get",
    "thread_open",
    "thread_queue",
    "thread_start",
    "thread_supersede",
    "thread_update",
]


def thread_get(*, client: ApiClient, workflow: str, thread_id: str) -> AguiThread | None:
    """The thread's row, or None for a thread this client never used on this workflow; the
    version its session started under comes along (``session_version``)."""
    threads = AguiThread.objects.filter(client=client, workflow=workflow, thread_id=thread_id)
    return threads.annotate(session_version=F("session__workflow_version")).first()


def thread_open(
    *, client: ApiClient, workflow: str, thread_id: str, start: dict[str, Any] | None = None
) -> tuple[AguiThread | None, tuple[list[engine.Event], dict[str, Any]] | None]:
    """A known thread, checked to be runnable: ``(thread, None)``; else, with ``start`` (the
    keyword arguments of :func:`thread_start` but the first three), the new thread started:
    ``(thread, (events, state))`` as :func:`thread_start` returns them; else ``(None, None)``.
    One call (one hop from the stream) where there were two.

    Raises:
        engine.VersionMismatchError: the definition the thread's session started (and paused)
            under is no longer deployed, so it cannot run again.
        Everything :func:`thread_start` raises.
    """
    thread = thread_get(client=client, workflow=workflow, thread_id=thread_id)
    if thread is not None:
        check_runnable(workflow, thread.session_version)  # type: ignore[attr-defined]  # a thread's sessions are of its workflow
        return thread, None
    if start is None:
        return None, None
    thread, events, state = thread_start(client=client, workflow=workflow, thread_id=thread_id, **start)
    return thread, (events, state)


def thread_start(
    *,
    client: ApiClient,
    workflow: str,
    thread_id: str,
    data: Any,
    message_id: str,
    session_id: str | None = None,
    queue_run: dict[str, Any] | None = None,
) -> tuple[AguiThread, list[engine.Event], dict[str, Any]]:
    """Create a new thread's session (``session_start``, its run not queued), bind the thread to
    it and store ``data`` as its first message; returns the thread with what its stream starts
    from (the stored events, the state; as :func:`stream_start` reads them).

    One transaction: when a concurrent first request of the same thread got there first, the
    thread's unique key refuses this one and everything rolls back, so the loser leaves no
    session behind. ``data`` is already validated against the workflow's input. ``session_id``:
    the session's id, made beforehand (``new_session_id``: the stream joins its progress group
    first). With ``queue_run`` (the run's metadata) the run is queued in the same transaction
    (``enqueue_run``; only when ``runs_wait_in_queue``, else see :func:`run_enqueue`), first, so
    the worker is woken as it commits, before the outbox relay; what the stream starts from is
    read before that commit, so the run's events all come to the stream as progress.

    Raises:
        Refusal: ``session_busy`` when the same thread was started by a concurrent request;
            nothing was stored.
    """
    session_id = session_id or new_session_id()
    try:
        with transaction.atomic():
            if queue_run is not None:
                enqueue_run(session_id, metadata=queue_run)
            session = session_start(
                workflow=workflow,
                data=data,
                user_id=decider(client),
                metadata={"source": "agui", "thread_id": thread_id},
                enqueue=False,
                session_id=session_id,
            )
            thread = AguiThread.objects.create(
                client=client, workflow=workflow, thread_id=thread_id, session=session, last_message_id=message_id
            )
            events, _ = stored_events(thread.session_id, thread.last_seq)
    except IntegrityError:  # two first requests of one thread raced: the other one owns it
        raise Refusal("session_busy") from None
    return thread, events, dict(session.state)  # as session_start read it back, after the start


def thread_supersede(*, thread: AguiThread, client: ApiClient, data: Any, message_id: str) -> AguiThread:
    """``on_arrival="supersede"``: cancel the thread's waiting session (its inbox items become
    superseded) and start a new one with ``data``, the thread now bound to it (``last_seq`` 0), in
    one transaction, audited (``session.arrival``). Its run is not queued (:func:`run_enqueue`).

    Raises:
        engine.SessionBusyError: a run holds the session right now; nothing changed.
        engine.WorkflowDataError: ``data`` does not fit the workflow's input; nothing changed.
    """
    old = thread.session_id
    with transaction.atomic():
        session_cancel_sync(old, reason="Superseded: a new message arrived on the thread.")
        session = session_start(
            workflow=thread.workflow,
            data=data,
            user_id=decider(client),
            metadata={"source": "agui", "thread_id": thread.thread_id, "supersedes_session": old},
            enqueue=False,
        )
        AguiThread.objects.filter(pk=thread.pk).update(
            session=session, last_seq=0, last_message_id=message_id, updated_at=timezone.now()
        )
        audit_record(
            action="session.arrival",
            actor=decider(client),
            target=session,
            detail={"policy": "supersede", "outcome": "superseded", "superseded": [old], "thread_id": thread.thread_id},
        )
    thread.refresh_from_db()
    return thread


def thread_queue(*, thread: AguiThread, client: ApiClient, data: Any, message_id: str) -> int:
    """``on_arrival="queue"``: keep ``data`` as the thread's next message, fed once its review is
    decided (``arrivals.arrival_queue_message``: checked against the workflow's input now);
    notes ``message_id`` as taken. Returns the arrival's id.

    Raises:
        engine.WorkflowDataError: the message does not fit the workflow's input; nothing is stored.
    """
    with transaction.atomic():
        session = WorkflowSession.objects.get(pk=thread.session_id)
        arrival = arrival_queue_message(
            session=session, data=data, user_id=decider(client), metadata={"source": "agui"}
        )
        thread_update(thread, message_id=message_id)
    return arrival.pk


def arrival_refused(*, thread: AguiThread, client: ApiClient, pending: list[InterruptRecord]) -> None:
    """Audit a new message refused because the thread waits on a review (``on_arrival="reject"``)."""
    audit_record(
        action="session.arrival",
        actor=decider(client),
        target_type="workflow_sessions.workflowsession",
        target_id=thread.session_id,
        detail={
            "policy": "reject",
            "outcome": "rejected",
            "pending": [r.id for r in pending],
            "thread_id": thread.thread_id,
        },
    )


def run_enqueue(session_id: str, metadata: dict[str, Any]) -> None:
    """Queue the session's run (``enqueue_run``) with ``metadata`` for its nodes (``ctx.metadata``).

    Called on a thread of the default executor, not the request's, so its database connections
    are recycled afterwards as a long-lived thread's (``thread_connections.recycle_connections``):
    back to the pool, if any, instead of staying open in that thread; a healthy SQLite one is
    kept, not reopened on the next enqueue.
    """
    try:
        enqueue_run(session_id, metadata=metadata)
    finally:
        recycle_connections()


def thread_update(thread: AguiThread, *, last_seq: int | None = None, message_id: str | None = None) -> None:
    """Note what the client has been sent (``last_seq``) and the newest message taken as input."""
    fields: dict[str, Any] = {"updated_at": timezone.now()}
    if last_seq is not None:
        fields["last_seq"] = last_seq
        thread.last_seq = last_seq
    if message_id is not None:
        fields["last_message_id"] = message_id
        thread.last_message_id = message_id
    AguiThread.objects.filter(pk=thread.pk).update(**fields)


def stored_events(session_id: str, after: int, known: Collection[str] = ()) -> tuple[list[engine.Event], int]:
    """The session's stored events with seq over ``after``, in order, and the newest seq among
    them (``after`` when there are none). Events whose id is in ``known`` (the stream sent them
    already) are left out: only the others' JSON is read and parsed."""
    rows = Event.objects.filter(session_id=session_id, seq__gt=after).order_by("seq")
    if not known:
        found = list(rows.values_list("seq", *COLUMNS))
        return [engine.Event.from_json(event_json(*row[1:])) for row in found], found[-1][0] if found else after
    ids = list(rows.values_list("seq", "event_id"))
    wanted = [seq for seq, event_id in ids if event_id not in known]
    data = rows.filter(seq__in=wanted).values_list(*COLUMNS) if wanted else []
    return [engine.Event.from_json(event_json(*row)) for row in data], ids[-1][0] if ids else after


def _lease_free(owner: str, expires: dt.datetime | None) -> bool:
    return not owner or expires is None or expires < timezone.now()


def lease_free(session_id: str) -> bool:
    """True when no live run holds the session's lease."""
    owner, expires = WorkflowSession.objects.values_list("lease_owner", "lease_expires").get(pk=session_id)
    return _lease_free(owner, expires)


def settled_events(session_id: str, after: int, known: Collection[str] = ()) -> tuple[list[engine.Event], int] | None:
    """:func:`stored_events` once no run holds the session and none is due (no live lease, not
    ``running``, not waiting with a stored answer no run has applied yet); else None."""
    owner, expires, status = WorkflowSession.objects.values_list("lease_owner", "lease_expires", "status").get(
        pk=session_id
    )
    if not _lease_free(owner, expires) or status == SessionStatus.RUNNING:
        return None
    unapplied = StoredAnswer.objects.filter(session_id=session_id, applied_at__isnull=True)
    if status == SessionStatus.WAITING and unapplied.exists():
        return None
    return stored_events(session_id, after, known)


def due_times(session_id: str, records: list[InterruptRecord]) -> dict[str, dt.datetime]:
    """When each pending interrupt is due: the inbox item's ``due_at`` when the inbox sets one,
    else ``created + metadata["due_in_seconds"]``; interrupts without a due time are left out."""
    rows = Item.objects.filter(
        session_id=session_id, status=ItemStatus.PENDING, interrupt_id__in=[r.id for r in records]
    ).values_list("interrupt_id", "due_at", "metadata", "created_at")  # not the payload nor the search text
    due: dict[str, dt.datetime] = {}
    for interrupt_id, when, metadata, created_at in rows:
        seconds = (metadata or {}).get("due_in_seconds")
        if when is None and isinstance(seconds, int | float) and created_at is not None:
            when = created_at + dt.timedelta(seconds=float(seconds))
        if when is not None:
            due[interrupt_id] = when
    return due


def stream_continue(
    session_id: str, after: int
) -> tuple[list[engine.Event], dict[str, Any], list[InterruptRecord], dict[str, dt.datetime]] | None:
    """:func:`stream_start`'s read for a known thread, with the session's pending interrupts and
    their due times (:func:`due_times`), once no live run holds the session (:func:`lease_free`;
    None while one does), in one call (one hop from the stream)."""
    if not lease_free(session_id):
        return None
    events, state = stream_start(session_id, after)
    pending = pending_interrupts_sync(session_id)
    return events, state, pending, due_times(session_id, pending) if pending else {}


def stream_start(session_id: str, after: int) -> tuple[list[engine.Event], dict[str, Any]]:
    """What a stream says before the live run, read at once: the stored events after ``after``
    (:func:`stored_events`) and the session's state (for STATE_SNAPSHOT)."""
    events, _ = stored_events(session_id, after)
    return events, session_record_sync(session_id).state


@dataclass(frozen=True)
class Outcome:
    """How a settled session stands at the end of a stream (:func:`run_outcome`)."""

    events: list[engine.Event]  # stored after the thread's last_seq, in order, less those the stream sent
    record: SessionRecord
    pending: list[InterruptRecord]  # empty unless waiting
    due: dict[str, dt.datetime]  # due times of ``pending`` (:func:`due_times`)


def run_outcome(thread: AguiThread, sent: Collection[str] = ()) -> Outcome | None:
    """Once the session is settled (:func:`settled_events`): the events stored after the thread's
    ``last_seq`` but not in ``sent`` (ids of events the stream sent), the session's record, its
    pending interrupts and their due times, with the new ``last_seq`` noted on the thread
    (:func:`thread_update`), in one call (one hop from the stream); None while a run holds the
    session or one is due."""
    found = settled_events(thread.session_id, thread.last_seq, sent)
    if found is None:
        return None
    events, last_seq = found
    record = session_record_sync(thread.session_id)
    pending = pending_interrupts_sync(thread.session_id) if record.status == SessionStatus.WAITING else []
    thread_update(thread, last_seq=last_seq)
    return Outcome(events, record, pending, due_times(thread.session_id, pending) if pending else {})
