"""Threads and sessions for the AG-UI door (sync ORM work; the stream calls these via ``sync_to_async``).

A thread is a workflow session (AG-UI ``threadId``): :func:`thread_get` finds the session of
``(client, workflow, threadId)``; :func:`thread_start` makes one for a new thread (the session,
the thread and the first message in one transaction).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction
from django.utils import timezone

from engine import InterruptRecord, Runner

from ..api.models import ApiClient
from ..inbox.answers import Answer, read_answer
from ..inbox.errors import DecisionError
from ..inbox.models import Interrupt, InterruptStatus
from ..inbox.refusals import claimed_conflict, newer_request
from ..workflow_sessions.models import WorkflowSession
from .errors import Refusal
from .models import AguiThread

__all__ = ["due_times", "lease_free", "session_seq", "thread_get", "thread_start", "thread_update"]


def thread_get(*, client: ApiClient, workflow: str, thread_id: str) -> AguiThread | None:
    """The thread's row, or None for a thread this client never used on this workflow."""
    return AguiThread.objects.filter(client=client, workflow=workflow, thread_id=thread_id).first()


def _title(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return " ".join(text.split())[:200]


def thread_start(
    *, runner: Runner, client: ApiClient, workflow: str, thread_id: str, data: Any, message_id: str
) -> AguiThread:
    """Create a new thread's session, bind the thread to it and store ``data`` as its first message.

    One transaction: when a concurrent first request of the same thread got there first, the
    thread's unique key refuses this one and everything rolls back, so the loser leaves no
    session behind. ``runner`` is the workflow's runner (on the ORM store; ``data`` already
    validated against its input).

    Raises:
        Refusal: ``session_busy`` when the same thread was started by a concurrent request;
            nothing was stored.
    """
    try:
        with transaction.atomic():
            record = async_to_sync(runner.create_session)(
                user_id=f"agui:{client.name}", metadata={"source": "agui", "thread_id": thread_id}
            )
            WorkflowSession.objects.filter(pk=record.id).update(title=_title(data))
            thread = AguiThread.objects.create(
                client=client, workflow=workflow, thread_id=thread_id, session_id=record.id, last_message_id=message_id
            )
            async_to_sync(runner.start)(record.id, data)
            return thread
    except IntegrityError:  # two first requests of one thread raced: the other one owns it
        raise Refusal("session_busy") from None


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


def session_seq(session_id: str) -> int:
    """The seq of the session's newest event."""
    return WorkflowSession.objects.values_list("last_seq", flat=True).get(pk=session_id)


def lease_free(session_id: str) -> bool:
    """True when no live run holds the session's lease."""
    owner, expires = WorkflowSession.objects.values_list("lease_owner", "lease_expires").get(pk=session_id)
    return not owner or expires is None or expires < timezone.now()


def read_answers(session_id: str, answers: dict[str, Any], *, override_claims: bool = False) -> dict[str, Answer]:
    """Read each answer once (``inbox.answers.read_answer``): the decision it stands for and the
    normalised payload to store, by interrupt id (answers to no pending item are left out: the
    engine refuses them). Refuses an answer to an interrupt a reviewer has claimed (unless
    ``override_claims``), one its request kind does not support or cannot read, an empty
    free-text one or one over its maximum length.

    Raises:
        Refusal: ``interrupt_claimed``, ``action_not_supported``, ``answer_invalid``,
            ``answer_too_long`` or ``answer_missing``; nothing was stored.
    """
    rows = Interrupt.objects.filter(
        session_id=session_id, status=InterruptStatus.PENDING, interrupt_id__in=list(answers)
    )
    read: dict[str, Answer] = {}
    for row in rows.select_related("session", "claimed_by"):
        if row.claim_holder() and not override_claims:
            raise Refusal("interrupt_claimed", claimed_conflict(row).message)
        try:
            read[row.interrupt_id] = read_answer(row, answers[row.interrupt_id])
        except DecisionError as exc:
            raise Refusal(exc.code, exc.message) from None
    return read


def newer_interrupt(session_id: str, interrupt_id: str) -> str | None:
    """The id of the newer request that replaced ``interrupt_id`` in the session (``inbox.refusals.newer_request``)."""
    row = Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).first()
    newer = newer_request(row) if row is not None else None
    return newer.interrupt_id if newer is not None else None


def due_times(session_id: str, records: list[InterruptRecord]) -> dict[str, dt.datetime]:
    """When each pending interrupt is due: the inbox item's ``due_at`` when the inbox sets one,
    else ``created + metadata["due_in_seconds"]``; interrupts without a due time are left out."""
    rows = Interrupt.objects.filter(
        session_id=session_id, status=InterruptStatus.PENDING, interrupt_id__in=[r.id for r in records]
    )
    due: dict[str, dt.datetime] = {}
    for row in rows:
        when = getattr(row, "due_at", None)
        seconds = (row.metadata or {}).get("due_in_seconds")
        if when is None and isinstance(seconds, int | float) and row.created_at is not None:
            when = row.created_at + dt.timedelta(seconds=float(seconds))
        if when is not None:
            due[row.interrupt_id] = when
    return due
