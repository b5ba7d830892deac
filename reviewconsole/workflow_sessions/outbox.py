"""The transactional outbox: domain events written with the store's commit, and their relay.

**Writing.** :func:`outbox_write` adds ``OutboxEvent`` rows in the caller's transaction (the
store calls it after locking the session row, so one session's ids follow its commit order) and
asks for a relay of those rows once the transaction commits (``on_commit(robust=True)``: inline
on the committing thread, so a new item reaches the inbox as fast as the commit did). Each
consumer says which events it wants (``wants``, asked at write time; none: every event); a row
no consumer wants is written already published (``published_at`` = ``created_at``): the outbox
still records every event, but costs no relay. A consumer enabled later (an outbound
subscription) hears of events written after it, not of earlier ones.

**Relaying a commit's rows.** The rows one commit wrote are relayed together, in one
transaction: one conditional UPDATE claims them all (``outbox_sql.claim_rows``: still
unpublished, and no earlier unpublished row of the session), and the consumers get the events
the commit wrote (no re-read). When the first row is not claimed (an earlier row of the session
is still unpublished: a failed consumer, a crash) or a consumer raises, that batch is left to
:func:`relay` of the session, which goes row by row as below. Writing and claiming are plain
SQL (``outbox_sql.py``): they are on every commit that opens, answers or cancels an interrupt.

**Relaying.** :func:`relay` takes unpublished rows in id order, skipping a row whose session has
an earlier unpublished one (per-session order even with several relays; on PostgreSQL the
candidates are read with ``SELECT … FOR UPDATE SKIP LOCKED``). Each row is one transaction: a
conditional ``UPDATE … SET published_at = now WHERE id = … AND published_at IS NULL`` claims it
(0 rows: another relay did it), every consumer runs in ``order`` (an ``interrupt.opened`` row's
``record`` read from its ``Interrupt`` row: the outbox does not copy it), and the transaction commits. A
crash mid-row rolls it back and the row is relayed again (at least once); database effects of
consumers happen exactly once because they share the claim's transaction. Consumers key anything
outside the database (a task, a mail) by ``outbox_id``.

**Failures.** A consumer that raises rolls the row's transaction back; the failure is logged, and
``attempts`` and ``last_error`` (the exception's class, never its text) are recorded. The next
sweep tries again; after :data:`MAX_ATTEMPTS` tries the row is given up: ``failed_at`` and
``published_at`` are set, so it no longer holds back the session's later events, and the admin
lists it (Outbox events, "failed") for someone to look at.

**Sweeping.** :func:`outbox_sweep` (every worker's recovery loop and ``serve``) relays whatever a
crash left and prunes rows published more than :data:`KEEP` ago. Other apps' sweeps register with
:func:`register_sweeper` (the inbox's expiry and change-log prune), so this app imports none.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from .domain_events import DomainEvent, InterruptOpened, event_data, from_row
from .models import Interrupt, OutboxEvent
from .outbox_sql import claim_rows, insert_rows
from .store_rows import interrupt_asked

logger = logging.getLogger("reviewconsole.outbox")

__all__ = [
    "KEEP",
    "MAX_ATTEMPTS",
    "Consumer",
    "outbox_prune",
    "outbox_sweep",
    "outbox_write",
    "register_consumer",
    "register_sweeper",
    "relay",
    "row_event",
]

MAX_ATTEMPTS = 5
"""Tries of a row whose consumer keeps failing before it is given up (``failed_at``)."""

KEEP = dt.timedelta(days=7)
"""How long published rows are kept."""

Handler = Callable[[DomainEvent, int], None]
"""``handler(event, outbox_id)``: runs inside the row's transaction; raises to retry the row."""

Wants = Callable[[DomainEvent], bool]
"""``wants(event)``: whether the consumer has work for ``event``; asked in the writing transaction."""


@dataclass(frozen=True, slots=True)
class Consumer:
    name: str
    handler: Handler
    order: int
    wants: Wants | None = None


_consumers: dict[str, Consumer] = {}
_sweepers: dict[str, Callable[[], object]] = {}


def register_consumer(name: str, handler: Handler, *, order: int = 100, wants: Wants | None = None) -> None:
    """Add (or replace) the consumer ``name``; consumers run by ``order``, then name.

    ``wants``: which events it has work for (None: all); an event no consumer wants is written
    already published. It must not miss an event the handler would act on.
    """
    _consumers[name] = Consumer(name, handler, order, wants)


def unregister_consumer(name: str) -> None:
    """Remove the consumer ``name`` (tests)."""
    _consumers.pop(name, None)


def consumers() -> list[Consumer]:
    return sorted(_consumers.values(), key=lambda c: (c.order, c.name))


def register_sweeper(name: str, sweep: Callable[[], object]) -> None:
    """Add a function every recovery sweep calls after the relay (its failures are logged)."""
    _sweepers[name] = sweep


def _wanted(event: DomainEvent, registered: list[Consumer]) -> bool:
    return any(c.wants is None or c.wants(event) for c in registered)


def outbox_write(session_id: str, events: Iterable[DomainEvent]) -> None:
    """Store ``events`` for ``session_id`` in the current transaction; relay the wanted ones after commit."""
    events = list(events)
    if not events:
        return
    registered = consumers()
    wanted = [_wanted(e, registered) for e in events]
    rows = [(e.KIND, event_data(e), not w) for e, w in zip(events, wanted, strict=True)]
    ids = insert_rows(session_id, rows, timezone.now())
    batch = [(pk, e) for pk, e, w in zip(ids, events, wanted, strict=True) if w]
    if batch:
        transaction.on_commit(lambda: _relay_commit(session_id, batch), robust=True)


def _relay_commit(session_id: str, batch: list[tuple[int, DomainEvent]]) -> None:
    """Relay the rows one commit wrote (``(id, event)`` in id order) in one transaction; see the module docstring."""
    try:
        with transaction.atomic():
            # One conditional UPDATE claims them all; without the first row (held back behind an
            # earlier unpublished row of the session, or another relay has it) the batch is left
            # to the row-by-row relay. A later row the sweep took in the meantime is skipped.
            claimed = claim_rows(session_id, [pk for pk, _ in batch], timezone.now())
            if batch[0][0] not in claimed:
                raise _HeldBack
            for pk, event in batch:
                if pk in claimed:
                    for consumer in consumers():
                        consumer.handler(event, pk)
    except _HeldBack:
        relay(session_id=session_id)
    except Exception:
        logger.info("Outbox rows of session %s: a consumer failed; relayed row by row", session_id, exc_info=True)
        relay(session_id=session_id)


class _HeldBack(Exception):
    """The first row could not be claimed (an earlier row of the session is unpublished, or
    another relay has it): the batch is left to :func:`relay`."""


def _candidates(limit: int, *, after: int = 0) -> list[tuple[int, str]]:
    """Up to ``limit`` unpublished rows with an id above ``after``, oldest first, whose session
    has no earlier unpublished row."""
    unpublished = OutboxEvent.objects.filter(published_at__isnull=True)
    earlier = unpublished.filter(session_id=OuterRef("session_id"), id__lt=OuterRef("id"))
    rows = unpublished.filter(~Exists(earlier), id__gt=after)
    return list(rows.order_by("id").values_list("id", "session_id")[:limit])


_T = OutboxEvent._meta


def _claim(pk: int) -> tuple[str, dict[str, object]] | None:
    """Set ``published_at`` of row ``pk`` if it is still unpublished; its ``(kind, data)``, or None.

    One ``UPDATE … RETURNING`` (SQLite 3.35+, PostgreSQL). The race this guards: two relays take
    the same row. Only the UPDATE that still finds it unpublished claims it; the other skips it.
    """
    table = connection.ops.quote_name(_T.db_table)
    published, key = (connection.ops.quote_name(_T.get_field(n).column) for n in ("published_at", "id"))
    kind, data = (connection.ops.quote_name(_T.get_field(n).column) for n in ("kind", "data"))
    now = _T.get_field("published_at").get_db_prep_save(timezone.now(), connection)
    params: list[object] = [now, pk]
    where = f"{key} = %s AND {published} IS NULL"
    sql = f"UPDATE {table} SET {published} = %s WHERE {where} RETURNING {kind}, {data}"  # noqa: S608 (names from the model, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    field = _T.get_field("data")
    return row[0], field.from_db_value(row[1], None, connection)  # type: ignore[attr-defined]


def row_event(kind: str, data: dict[str, Any]) -> DomainEvent:
    """The event an outbox row holds (its ``kind`` and ``data``); an opened interrupt's ``record``
    is read from its ``Interrupt`` row (``domain_events.InterruptOpened``).

    Raises:
        Interrupt.DoesNotExist: that row is gone. KeyError, TypeError: as ``domain_events.from_row``.
    """
    if kind == InterruptOpened.KIND and "record" not in data:
        data = {**data, "record": interrupt_asked(Interrupt.objects.get(pk=data["interrupt_pk"]))}
    return from_row(kind, data)


def _publish(pk: int, *, skip_locked: bool) -> bool:
    """Claim row ``pk`` and run every consumer, in one transaction; False if someone else had it.

    ``skip_locked`` (PostgreSQL): pass over a row another relay holds instead of waiting for it.
    """
    with transaction.atomic():
        if skip_locked and connection.features.has_select_for_update_skip_locked:
            rows = OutboxEvent.objects.filter(pk=pk, published_at__isnull=True)
            if not rows.select_for_update(skip_locked=True).values_list("pk", flat=True):
                return False
        claimed = _claim(pk)
        if claimed is None:
            return False
        event = row_event(claimed[0], claimed[1])  # type: ignore[arg-type]
        for consumer in consumers():
            consumer.handler(event, pk)
    return True


def _record_failure(pk: int, exc: Exception) -> bool:
    """Count a failed try of row ``pk``; True when that gave it up."""
    row = OutboxEvent.objects.filter(pk=pk, published_at__isnull=True).first()
    if row is None:
        return False
    attempts = row.attempts + 1
    fields: dict[str, object] = {"attempts": attempts, "last_error": type(exc).__name__[:200]}
    if attempts >= MAX_ATTEMPTS:
        now = timezone.now()
        fields.update(failed_at=now, published_at=now)
        logger.error("Outbox event %s (%s) failed %s times; given up (see the admin)", pk, row.kind, attempts)
    OutboxEvent.objects.filter(pk=pk, published_at__isnull=True).update(**fields)
    return attempts >= MAX_ATTEMPTS


def _failed(pk: int, exc: Exception) -> bool:
    """Log and count a consumer's failure on row ``pk``; True when the row was given up."""
    logger.exception("Outbox event %s: a consumer failed; it will be tried again", pk)
    return _record_failure(pk, exc)


def relay(*, session_id: str | None = None, limit: int = 200) -> int:
    """Publish unpublished rows (of ``session_id``, or of every session) in order; returns how
    many this call published.

    For one session (the inline relay after a commit) its rows are read once, oldest first, and
    a row another relay is publishing is waited for (its lock), so the order holds. For all
    sessions (the sweep) a row whose session has an earlier unpublished one is left for later,
    and on PostgreSQL a row another relay holds is skipped. The sweep pages through the
    candidates by id, ``limit`` at a time, so rows that keep failing (not yet given up) never
    hide the rows behind them: every session's first unpublished row is tried once per pass.

    Never raises for a consumer's failure (logged and counted, see the module docstring); a row
    that failed holds back its session's later rows until it succeeds or is given up.
    """
    if session_id is not None:
        return _relay_session(session_id, limit)
    published = 0
    blocked: set[str] = set()
    after = 0
    progress = False
    while True:
        ids = _candidates(limit, after=after)
        for pk, row_session in ids:
            if row_session in blocked:
                continue
            try:
                done = _publish(pk, skip_locked=True)
            except Exception as exc:
                if _failed(pk, exc):
                    progress = True  # given up: the session's later rows may go on
                else:
                    blocked.add(row_session)
                continue
            if done:
                published += 1
                progress = True
        if len(ids) == limit:  # the next page, behind rows that failed
            after = ids[-1][0]
            continue
        if not progress:
            return published
        after, progress = 0, False  # a pass that published: the rows it held back are candidates now


def _relay_session(session_id: str, limit: int) -> int:
    rows = OutboxEvent.objects.filter(session_id=session_id, published_at__isnull=True)
    published = 0
    for pk in rows.order_by("id").values_list("id", flat=True)[:limit]:
        try:
            published += _publish(pk, skip_locked=False)
        except Exception as exc:
            if not _failed(pk, exc):
                break  # the session's later rows wait behind this one
    return published


def outbox_prune(*, now: dt.datetime | None = None) -> int:
    """Delete rows published more than :data:`KEEP` ago (given-up rows are kept); returns how many."""
    cutoff = (now or timezone.now()) - KEEP
    deleted, _ = OutboxEvent.objects.filter(published_at__lt=cutoff, failed_at__isnull=True).delete()
    return deleted


PRUNE_EVERY = 3600.0
"""Seconds between prunes by :func:`outbox_sweep`."""

_last_prune = float("-inf")


def outbox_sweep() -> int:
    """Relay what is left (a crash, a failed consumer), prune once an hour, then run the
    registered sweepers (the inbox's expiry and change-log prune)."""
    global _last_prune
    published = relay()
    if time.monotonic() - _last_prune > PRUNE_EVERY:
        _last_prune = time.monotonic()
        outbox_prune()
    for name, sweep in list(_sweepers.items()):
        try:
            sweep()
        except Exception:
            logger.exception("Sweep %s failed", name)
    return published
