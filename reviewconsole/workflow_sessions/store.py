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
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

import engine
from engine import (
    RETRY_KEY,
    AnswerGuard,
    Commit,
    ConcurrencyError,
    Decision,
    InterruptRecord,
    RunLoad,
    SessionNotFoundError,
    SessionRecord,
    StoredAnswer,
    UnknownInterruptError,
    split_delta,
)

from . import store_sql
from .domain_events import (
    DomainEvent,
    InterruptAnswered,
    InterruptCancelled,
    InterruptOpened,
    SessionStatusChanged,
)
from .models import (
    SESSION_FAILED,
    Answer,
    Checkpoint,
    Event,
    Interrupt,
    InterruptStatus,
    SharedState,
    WorkflowSession,
)
from .outbox import outbox_write
from .restore import restore_checkpoint
from .store_rows import already_decided, interrupt_fields, interrupt_record, session_record

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
        return await sync_to_async(self.create_session_sync)(
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
    ) -> SessionRecord:
        kwargs: dict[str, Any] = {}
        if session_id:
            kwargs["id"] = session_id
        try:
            with transaction.atomic():
                row = WorkflowSession.objects.create(
                    workflow=app_name,
                    user_id=user_id,
                    state=dict(state or {}),
                    workflow_version=workflow_version,
                    metadata=dict(metadata or {}),
                    **kwargs,
                )
        except IntegrityError as exc:
            raise ConcurrencyError(f"Session {session_id!r} already exists.", session_id=session_id) from exc
        return session_record(row)

    async def get_session(self, session_id: str) -> SessionRecord:
        return await sync_to_async(self.get_session_sync)(session_id)

    def get_session_sync(self, session_id: str) -> SessionRecord:
        row = store_sql.session_row(session_id)
        if row is None:
            raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
        return session_record(row)

    async def list_events(self, session_id: str, *, path: str | None = None, after: int = 0) -> list[engine.Event]:
        return await sync_to_async(self._list_events)(session_id, path, after)

    def _list_events(self, session_id: str, path: str | None, after: int) -> list[engine.Event]:
        rows = Event.objects.filter(session_id=session_id, seq__gt=after)
        if path is not None:
            rows = rows.filter(node_path=path)
        return [engine.Event.from_json(data) for data in rows.order_by("seq").values_list("data", flat=True)]

    async def get_shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return await sync_to_async(self._shared_state)(app_name, user_id)

    def _shared_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for row in SharedState.objects.filter(workflow=app_name, user_id__in=["", user_id]).order_by("user_id"):
            merged.update(row.state)
        return merged

    # -- commits -----------------------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> SessionRecord:
        return await sync_to_async(self._commit)(session_id, commit)

    @transaction.atomic
    def _commit(self, session_id: str, commit: Commit) -> SessionRecord:
        now = timezone.now()
        state = commit.state if commit.state is not None else self._state_after(session_id, commit.events)
        checkpoint_id = uuid.uuid4().hex if commit.pause and commit.checkpoint is not None else None
        row = store_sql.update_session(
            session_id, commit, state=state, now=now, checkpoint_id=checkpoint_id, events=len(commit.events)
        )
        if commit.status == engine.SessionStatus.WAITING and not commit.opened:
            self._check_resumable(session_id, commit)
        store_sql.insert_events(session_id, commit.events, row.last_seq)
        for event in commit.events:
            _, app_delta, user_delta = split_delta(event.state_delta)
            if app_delta:
                self._update_shared(row.workflow, "", app_delta)
            if user_delta:
                self._update_shared(row.workflow, row.user_id, user_delta)
        reported: list[DomainEvent] = []
        if commit.opened:
            # A retry asks again the interrupts its session's failure cancelled.
            retrying = any(RETRY_KEY in (e.custom_metadata or {}) for e in commit.events)
            opened = [Interrupt(session_id=session_id, created_at=now, **interrupt_fields(r)) for r in commit.opened]
            Interrupt.objects.bulk_create(opened)
            reported += [
                InterruptOpened(
                    session_id=session_id,
                    interrupt_pk=i.pk,
                    workflow=row.workflow,
                    title=row.title,
                    record={**interrupt_fields(rec), "created_at": now.isoformat()},
                    reopens=retrying,
                )
                for i, rec in zip(opened, commit.opened, strict=True)
            ]
        if commit.cancelled:
            targets = Interrupt.objects.filter(
                session_id=session_id, interrupt_id__in=commit.cancelled, status=InterruptStatus.PENDING
            )
            cancelled = list(targets.values_list("pk", "interrupt_id"))
            failed = commit.status == engine.SessionStatus.FAILED  # said so on the item's page
            targets.update(status=InterruptStatus.CANCELLED, decided_at=now, decision=SESSION_FAILED if failed else "")
            cause = SESSION_FAILED if failed else "superseded"
            reported += [
                InterruptCancelled(session_id, pk, wire, cause=cause, decided_at=now.isoformat())
                for pk, wire in cancelled
            ]
        if commit.consumed:
            Answer.objects.filter(session_id=session_id, pk__in=commit.consumed).update(applied_at=now)
        if checkpoint_id is not None:
            pending = Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)
            Checkpoint.objects.create(
                id=checkpoint_id,
                session_id=session_id,
                data=commit.checkpoint,
                event_seq=row.last_seq,
                state=state,
                pending=list(pending.values_list("interrupt_id", flat=True)),
            )
        if commit.status in engine.SessionStatus.CLOSED:
            error = commit.error if isinstance(commit.error, dict) else {}
            reported.append(
                SessionStatusChanged(
                    session_id=session_id,
                    workflow=row.workflow,
                    status=commit.status,
                    output=row.output if commit.status == engine.SessionStatus.COMPLETED else None,
                    error_code=error.get("code", "error") if commit.status == engine.SessionStatus.FAILED else None,
                    error_node_path=error.get("node_path"),
                )
            )
        outbox_write(session_id, reported)
        return SessionRecord(
            id=session_id,
            app_name=row.workflow,
            user_id=row.user_id,
            state=dict(state),
            status=commit.status,
            checkpoint=commit.checkpoint,
            checkpoint_id=row.checkpoint_id or None,
            version=commit.expected_version + 1,
            workflow_version=row.workflow_version,
            invocation_id=row.invocation_id,
            output=row.output,
            error=commit.error,
            metadata=dict(row.metadata),
            updated_at=now.timestamp(),
        )

    def _check_resumable(self, session_id: str, commit: Commit) -> None:
        """Refuse a ``waiting`` commit after which nothing can resume the session (no pending
        interrupt, no answer left to apply, no message awaited): two indexed EXISTS queries, only
        for waiting commits that open no interrupt.

        Raises:
            StuckSessionError: the transaction rolls back; nothing is stored.
        """
        if engine.awaits_message(commit.checkpoint):
            return
        pending = Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)
        if pending.exclude(interrupt_id__in=commit.cancelled).exists():
            return
        unapplied = Answer.objects.filter(session_id=session_id, applied_at__isnull=True)
        if unapplied.exclude(pk__in=commit.consumed).exists():
            return
        raise engine.StuckSessionError(
            f"Session {session_id} would wait with nothing to resume it.", session_id=session_id
        )

    def _state_after(self, session_id: str, events: list[engine.Event]) -> dict[str, Any]:
        """The stored state with the session keys of ``events``' deltas applied (for writers that do not track it)."""
        state: dict[str, Any] = WorkflowSession.objects.values_list("state", flat=True).get(pk=session_id)
        for event in events:
            state.update(split_delta(event.state_delta)[0])
        return state

    def _update_shared(self, workflow: str, user_id: str, delta: dict[str, Any]) -> None:
        shared, _ = SharedState.objects.select_for_update().get_or_create(workflow=workflow, user_id=user_id)
        shared.state.update(delta)
        shared.save(update_fields=["state"])

    # -- interrupts and answers --------------------------------------------------------------

    async def pending_interrupts(self, session_id: str) -> list[InterruptRecord]:
        return await sync_to_async(self._pending)(session_id)

    def _pending(self, session_id: str) -> list[InterruptRecord]:
        return [interrupt_record(r) for r in store_sql.pending_interrupts(session_id)]

    async def get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        return await sync_to_async(self._get_interrupt)(session_id, interrupt_id)

    def _get_interrupt(self, session_id: str, interrupt_id: str) -> InterruptRecord | None:
        row = Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).order_by("-id").first()
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
        await sync_to_async(self._submit)(session_id, answers, event, decided_by, decisions or {}, guard)

    @transaction.atomic
    def _submit(
        self,
        session_id: str,
        answers: list[engine.Answer],
        event: engine.Event,
        decided_by: str | None,
        decisions: Mapping[str, Decision],
        guard: AnswerGuard | None,
    ) -> None:
        now = timezone.now()
        # Reserving the event's seq locks the session row first: answers to one session queue up.
        last_seq = store_sql.append_seq(session_id, 1, now)
        answered: list[str] = []
        reported: list[DomainEvent] = []

        def pending_before() -> list[str]:
            still = Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)
            return sorted({*still.values_list("interrupt_id", flat=True), *answered})

        for answer in answers:
            if not answer.interrupt_id:
                continue
            pending = Interrupt.objects.filter(
                session_id=session_id, interrupt_id=answer.interrupt_id, status=InterruptStatus.PENDING
            )
            if answer.final:
                if guard is not None:
                    guard.check(session_id, answer.interrupt_id)  # raises to refuse (the inbox's 409s)
                decision = decisions.get(answer.interrupt_id) or Decision()
                pk = pending.values_list("pk", flat=True).first()
                # The race this guards: two reviewers (or a reviewer and an API client) decide the
                # same interrupt at once. Only the UPDATE that still finds it pending changes a row.
                changed = pending.update(
                    status=InterruptStatus.RESOLVED,
                    response=answer.value,
                    decision=decision.kind,
                    reason=decision.reason,
                    decided_by_id=decision.user_id,
                    decided_by_label=decided_by or "",
                    decided_at=now,
                )
                if changed != 1 or pk is None:
                    self._refuse(session_id, answer.interrupt_id, pending_before())
                answered.append(answer.interrupt_id)
                reported.append(
                    InterruptAnswered(
                        session_id=session_id,
                        interrupt_pk=pk,  # type: ignore[arg-type]
                        interrupt_id=answer.interrupt_id,
                        decision=decision.kind,
                        decided_by=decided_by or "",
                        decided_by_id=decision.user_id,
                        reason=decision.reason,
                        edit_diff=decision.edit_diff,
                        response=answer.value,
                        decided_at=now.isoformat(),
                        timeout=decision.kind == "timeout",
                    )
                )
            elif not pending.exists():
                self._refuse(session_id, answer.interrupt_id, pending_before())
        store_sql.insert_events(session_id, [event], last_seq)
        Answer.objects.bulk_create(
            Answer(session_id=session_id, interrupt_id=a.interrupt_id, value=a.value, final=a.final) for a in answers
        )
        outbox_write(session_id, reported)

    def _refuse(self, session_id: str, interrupt_id: str, pending: list[str]) -> None:
        """Raise why an answer for ``interrupt_id`` cannot be taken (``pending``: ids pending before this batch)."""
        row = Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).order_by("-id").first()
        if row is None or interrupt_id in pending:
            raise UnknownInterruptError(f"No pending interrupt {interrupt_id!r}.", pending=pending)
        raise already_decided(row)

    async def take_answers(self, session_id: str) -> list[StoredAnswer]:
        return await sync_to_async(self._answers)(session_id)

    def _answers(self, session_id: str) -> list[StoredAnswer]:
        rows = Answer.objects.filter(session_id=session_id, applied_at__isnull=True).order_by("id")
        return [StoredAnswer(r.interrupt_id, r.value, r.final, id=r.pk) for r in rows]

    # -- leases and checkpoints --------------------------------------------------------------

    async def acquire_lease(self, session_id: str, owner: str, ttl: float) -> bool:
        return await sync_to_async(self.acquire_lease_sync)(session_id, owner, ttl)

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
        await sync_to_async(self.release_lease_sync)(session_id, owner)

    def release_lease_sync(self, session_id: str, owner: str) -> None:
        WorkflowSession.objects.filter(pk=session_id, lease_owner=owner).update(lease_owner="", lease_expires=None)

    async def open_run(self, session_id: str, owner: str, ttl: float) -> RunLoad | None:
        return await sync_to_async(self._open_run)(session_id, owner, ttl)

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
        return await sync_to_async(self._close_run)(session_id, owner)

    def _close_run(self, session_id: str, owner: str) -> bool:
        store_sql.release_lease(session_id, owner)
        return store_sql.has_unapplied_answers(session_id)

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        return await sync_to_async(self._checkpoint)(session_id, checkpoint_id)

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

        return await sync_to_async(restore_checkpoint)(
            session_id, checkpoint_id, lease_owner=lease_owner, decided_by=decided_by
        )
