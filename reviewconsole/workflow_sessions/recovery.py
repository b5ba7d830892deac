"""Recovery: a session whose run died is run again, from its last checkpoint.

Three things leave a session with work and no run coming:

- *a dead holder*: the worker running it died (``kill -9``, a lost machine, a run stopped by a
  database outage). Its lease is never renewed and expires after ``LEASE_TTL`` seconds.
- *a lost task*: the process died, or the database went away, between the commit that gave the
  session work (a start, a decision) and the enqueue of its ``run_session`` task.
- *a stuck wait*, stored before the store refused it: ``waiting`` on interrupts none of which is
  pending, with no answer to apply; the run re-derives the waiting point from the checkpoint
  (``engine/_recovery.py``) or fails the session with ``session_stuck``.

:func:`recover` finds them — sessions ``running``, ``waiting`` with answers not yet applied, or stuck
waiting, whose lease is expired, or free and untouched for ``grace`` seconds with no ``run_session`` task
queued — and enqueues one ``run_session`` for each. Every worker process sweeps (see
:class:`RecoveryLoop`); a conditional UPDATE on the lease columns lets exactly one sweeper
schedule a given session per ``grace`` period: it clears the dead owner and sets
``lease_expires`` to ``now + grace`` with ``lease_owner`` empty, which ``acquire_lease`` treats
as free (so the run starts at once) and other sweepers as recently scheduled. Duplicates would
be harmless anyway: ``run_pending`` takes the lease, and a run with nothing to do stops.

The same loop sweeps the outbox (:func:`.outbox.outbox_sweep`: events a crash left unpublished,
then the sweeps other apps registered, e.g. the inbox's expiry and change-log prune).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import Exists, OuterRef, Q
from django.tasks import task_backends
from django.utils import timezone
from django_tasks_db import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from engine import SessionStatus

from .arrivals import release_stranded
from .models import Answer, Interrupt, InterruptStatus, WorkflowSession
from .outbox import outbox_sweep
from .tasks import run_session

logger = logging.getLogger("reviewconsole.recovery")

__all__ = ["RecoveryLoop", "queued_session_ids", "recover", "sessions_to_recover"]


def _grace() -> float:
    return float(settings.REVIEWCONSOLE["LEASE_TTL"])


def queued_session_ids() -> set[str]:
    """Sessions with a ``run_session`` task waiting in django-tasks-db's queue (empty for other backends)."""
    if not isinstance(task_backends["default"], DatabaseBackend):
        return set()
    rows = DBTaskResult.objects.filter(status="READY", task_path=run_session.module_path)
    return {args[0] for args in rows.values_list("args_kwargs__args", flat=True) if args}


def sessions_to_recover(*, now: dt.datetime | None = None, grace: float | None = None, limit: int = 200) -> list[dict]:
    """Sessions with work, no live run and no queued task: ``id``, ``lease_owner``, ``lease_expires``.

    ``grace`` (seconds, default ``LEASE_TTL``): how long a session with a free lease may sit
    untouched before it counts as having lost its task.
    """
    now = now or timezone.now()
    grace = _grace() if grace is None else grace
    unapplied = Answer.objects.filter(session=OuterRef("pk"), applied_at__isnull=True)
    pending = Interrupt.objects.filter(session=OuterRef("pk"), status=InterruptStatus.PENDING)
    # Stored before the store refused it: waiting on interrupts, none pending, no answer to apply,
    # no message awaited. Its run re-derives the waiting point (or fails it as session_stuck).
    stuck = (
        Q(status=SessionStatus.WAITING, has_unapplied=False, has_pending=False)
        & Q(checkpoint__root__has_key="interrupts")
        & ~Q(checkpoint__root__has_key="awaiting_message")
    )
    has_work = Q(status=SessionStatus.RUNNING) | Q(status=SessionStatus.WAITING, has_unapplied=True) | stuck
    dead_holder = ~Q(lease_owner="") & Q(lease_expires__lt=now)
    lost_task = (
        Q(lease_owner="")
        & (Q(lease_expires__isnull=True) | Q(lease_expires__lt=now))
        & Q(updated_at__lt=now - dt.timedelta(seconds=grace))
    )
    rows = list(
        WorkflowSession.objects.annotate(has_unapplied=Exists(unapplied), has_pending=Exists(pending))
        .filter(has_work & (dead_holder | lost_task))
        .order_by("updated_at")
        .values("id", "lease_owner", "lease_expires")[:limit]
    )
    if not rows:
        return []
    queued = queued_session_ids()
    return [r for r in rows if r["lease_owner"] or r["id"] not in queued]


def recover(*, now: dt.datetime | None = None, grace: float | None = None) -> list[str]:
    """Schedule a run of every session :func:`sessions_to_recover` finds; returns their ids."""
    now = now or timezone.now()
    grace = _grace() if grace is None else grace
    scheduled: list[str] = []
    for row in sessions_to_recover(now=now, grace=grace):
        # The race this guards: several workers sweep at once. Only the UPDATE that still sees
        # the lease as it was read changes the row, so one sweeper schedules the session.
        seen = row["lease_expires"]
        same_lease = Q(lease_expires__isnull=True) if seen is None else Q(lease_expires=seen)
        with transaction.atomic():
            changed = WorkflowSession.objects.filter(same_lease, pk=row["id"], lease_owner=row["lease_owner"]).update(
                lease_owner="", lease_expires=now + dt.timedelta(seconds=grace)
            )
            if changed:
                transaction.on_commit(lambda sid=row["id"]: run_session.enqueue(sid), robust=True)
        if changed:
            scheduled.append(row["id"])
            logger.warning(
                "Session %s had work and no live run (lease %s); scheduled a run from its last checkpoint",
                row["id"],
                f"of {row['lease_owner']} expired" if row["lease_owner"] else "free, no task queued",
            )
    return scheduled


class RecoveryLoop:
    """A daemon thread calling :func:`recover` every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, *, interval: float | None = None) -> None:
        self.interval = interval if interval is not None else max(0.5, _grace() / 2)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            close_old_connections()
            try:
                recover()
            except Exception:  # the database may be away for a while; the next sweep tries again
                logger.exception("Recovery sweep failed")
            try:
                release_stranded()  # input queued behind a session whose run's release a crash lost
            except Exception:
                logger.exception("Arrival release sweep failed")
            try:
                outbox_sweep()  # events a crash left unpublished; the registered sweeps (inbox expiry)
            except Exception:
                logger.exception("Outbox sweep failed")
        close_old_connections()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="session-recovery", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
