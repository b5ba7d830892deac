"""The engine's :class:`engine.Store` on the Django ORM.

Every method is one transaction. Guarantees (the same suite as the in-memory store checks them):

- ``commit`` locks the session row, checks the version and the lease owner (the conditional write
  guards against two runs of one session), appends the events with consecutive ``seq`` numbers,
  applies their state deltas, creates interrupt rows routed to queues, marks answers applied and
  keeps a checkpoint row when the run pauses.
- ``submit_answers`` resolves each interrupt with a conditional UPDATE on ``status='pending'``: of
  two reviewers deciding at the same moment exactly one changes a row; the other gets
  :class:`engine.AlreadyDecidedError` naming who decided and when, and nothing is stored.
- ``acquire_lease`` is a conditional UPDATE too: free, expired, or already ours.

The store reports, it does not call: in each of these transactions, after the session row is
locked, it writes domain events (``domain_events.py``: interrupt opened / answered / cancelled,
session ended) to the outbox, which the relay (``outbox.py``) hands to the inbox and outbound
consumers after the commit. Its interrupts are the session's own ``Interrupt`` rows; it knows
nothing of queues, claims or items. The host's extra rule for an answer (the inbox's claim and
due time) comes as an :class:`engine.AnswerGuard`, called before the answer's conditional UPDATE.

This module is the engine's async face (each method one sync function, run by
``engine_calls.in_db``: on the thread of the sync code that awaits, and directly when a door's
call is driven by ``engine_calls.call``) and the session reads and leases; the commit is
``store_commit.py``, answers ``store_answers.py``, and the rows they write go through plain SQL
(``store_sql.py``, ``store_writes.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

import engine
from engine import (
    AnswerGuard,
    Commit,
    ConcurrencyError,
    Decision,
    InterruptRecord,
    RunLoad,
    SessionNotFoundError,
    SessionRecord,
    StoredAnswer,
)

from ..sql_insert import insert_instances
from . import store_sql
from .engine_calls import in_db
from .event_rows import COLUMNS, event_json
from .models import (
    Answer,
    Checkpoint,
    Event,
    Interrupt,
    SharedState,
    WorkflowSession,
)
from .restore import restore_checkpoint
from .store_answers import answers_write
from .store_commit import commit_write
from .store_rows import interrupt_record, session_record

__all__ = ["OrmStore"]


class OrmStore:
    """:class:`engine.Store` on the ORM (see the module docstring)."""

    # -- sessions ----------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        workflow_version: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> SessionRecord:
        return await in_db(self.create_session_sync)(
            app_name=app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            workflow_version=workflow_version,
            metadata=metadata,
        )

    def create_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        workflow_version: str = "",
        metadata: dict[str, Any] | None = None,
        title: str = "",
        correlation_key: str = "",
    ) -> SessionRecord:
        """:meth:`create_session` on the caller's thread; ``title`` and ``correlation_key``
        (the console's columns, up to 200 characters each) go into the same ``INSERT``.

        Raises:
            engine.ConcurrencyError: ``session_id`` is taken.
        """
        kwargs: dict[str, Any] = {}
        if session_id:
            kwargs["id"] = session_id
        try:
            row = WorkflowSession(
                workflow=app_name,
                user_id=user_id,
                state=dict(state or {}),
                workflow_version=workflow_version,
                metadata=dict(metadata or {}),
                title=title[:200],
                correlation_key=correlation_key[:200],
                **kwargs,
            )
            with transaction.atomic():  # a savepoint in a caller's transaction: a refusal leaves it usable
                insert_instances([row])  # one plain INSERT (WorkflowSession has no save() override)
        except IntegrityError as exc:
            raise ConcurrencyError(f"Session {session_id!r} already exists.", session_id=session_id) from exc
        return session_record(row)

    async def get_session(self, session_id: str) -> SessionRecord:
        return await in_db(self.get_session_sync)(session_id)

    def get_session_sync(self, session_id: str) -> SessionRecord:
        row = store_sql.session_row(session_id)
        if row is None:
            raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
        return session_record(row)

    async def list_events(self, session_id: str, *, path: str | None = None, after: int = 0) -> list[engine.Event]:
        return await in_db(self._list_events)(session_id, path, after)

    def _list_events(self, session_id: str, path: str | None, after: int) -> list[engine.Event]:
        rows = Event.objects.filter(session_id=session_id, seq__gt=after)
        if path is not None:
            rows = rows.filter(node_path=path)
        return [engine.Event.from_json(event_json(*row)) for row in rows.order_by("seq").values_list(*COLUMNS)]

    async def get_shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return await in_db(self._shared_state)(app_name, user_id)

    def _shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for row in SharedState.objects.filter(workflow=app_name, user_id__in=["", user_id]).order_by("user_id"):
            merged.update(row.state)
        return merged

    # -- commits -----------------------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> SessionRecord:
        return await in_db(self._commit)(session_id, commit)

    def _commit(self, session_id: str, commit: Commit) -> SessionRecord:
        return commit_write(session_id, commit)

    # -- interrupts and answers --------------------------------------------------------------

    async def pending_interrupts(self, session_id: str) -> list[InterruptRecord]:
        return await in_db(self._pending)(session_id)

    def _pending(self, session_id: str) -> list[InterruptRecord]:
        return [interrupt_record(r) for r in store_sql.pending_interrupts(session_id)]

    async def get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        return await in_db(self._get_interrupt)(session_id, interrupt_id)

    def _get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        row = Interrupt.objects.newest(session_id, interrupt_id)
        return interrupt_record(row) if row is not None else None

    async def submit_answers(
        self,
        session_id: str,
        answers: list[engine.Answer],
        event: engine.Event,
        *,
        decided_by: str | None,
        decisions: Mapping[str, Decision] | None = None,
        guard: AnswerGuard | None = None,
    ) -> None:
        await in_db(self._submit)(session_id, answers, event, decided_by, decisions or {}, guard)

    def _submit(
        self,
        session_id: str,
        answers: list[engine.Answer],
        event: engine.Event,
        decided_by: str | None,
        decisions: Mapping[str, Decision],
        guard: AnswerGuard | None,
    ) -> None:
        answers_write(session_id, answers, event, decided_by, decisions, guard)

    async def take_answers(self, session_id: str) -> list[StoredAnswer]:
        return await in_db(self._answers)(session_id)

    def _answers(self, session_id: str) -> list[StoredAnswer]:
        rows = Answer.objects.filter(session_id=session_id, applied_at__isnull=True).order_by("id")
        return [StoredAnswer(r.interrupt_id, r.value, r.final, id=r.pk) for r in rows]

    # -- leases and checkpoints --------------------------------------------------------------

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool:
        return await in_db(self.acquire_lease_sync)(session_id, owner, ttl)

    def acquire_lease_sync(self, session_id: str, owner: str, ttl: float) -> bool:
        now = timezone.now()
        free = Q(lease_owner="") | Q(lease_expires__lt=now) | Q(lease_owner=owner)
        changed = (
            WorkflowSession.objects.filter(pk=session_id)
            .filter(free)
            .update(lease_owner=owner, lease_expires=now + dt.timedelta(seconds=ttl))
        )
        if not changed and not WorkflowSession.objects.filter(pk=session_id).exists():
            raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
        return changed == 1

    async def release_lease(self, session_id: str, owner: str) -> None:
        await in_db(self.release_lease_sync)(session_id, owner)

    def release_lease_sync(self, session_id: str, owner: str) -> None:
        WorkflowSession.objects.filter(pk=session_id, lease_owner=owner).update(lease_owner="", lease_expires=None)

    async def open_run(self, session_id: str, owner: str, ttl: float) -> RunLoad | None:
        return await in_db(self._open_run)(session_id, owner, ttl)

    @transaction.atomic
    def _open_run(self, session_id: str, owner: str, ttl: float) -> RunLoad | None:
        columns = store_sql.take_lease(session_id, owner, ttl, timezone.now())
        if columns is None:
            if store_sql.session_row(session_id) is None:
                raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
            return None
        row = WorkflowSession(**columns)
        return RunLoad(
            record=session_record(row),
            pending=[interrupt_record(r) for r in store_sql.pending_interrupts(session_id)],
            answers=[
                StoredAnswer(a.interrupt_id, a.value, a.final, id=a.pk) for a in store_sql.unapplied_answers(session_id)
            ],
            shared_state=store_sql.shared_state(row.workflow, row.user_id),
        )

    async def close_run(self, session_id: str, owner: str) -> bool:
        return await in_db(self._close_run)(session_id, owner)

    def _close_run(self, session_id: str, owner: str) -> bool:
        store_sql.release_lease(session_id, owner)
        return store_sql.has_unapplied_answers(session_id)

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        return await in_db(self._checkpoint)(session_id, checkpoint_id)

    def _checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        row = Checkpoint.objects.filter(session_id=session_id, pk=checkpoint_id).first()
        return row.data if row is not None else None

    async def restore_checkpoint(
        self,
        session_id: str,
        checkpoint_id: str,
        *,
        lease_owner: str | None = None,
        decided_by: str | None = None,
    ) -> SessionRecord | None:
        """See :meth:`engine.Store.restore_checkpoint` (done in :mod:`.restore`, which states the rule)."""

        return await in_db(restore_checkpoint)(
            session_id, checkpoint_id, lease_owner=lease_owner, decided_by=decided_by
        )
