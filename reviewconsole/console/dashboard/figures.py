"""The managers' dashboard's figures: per queue and workflow, what waits and how decisions go.

For the queues a user manages (``inbox.items.selectors.managed_queues_for``: a member of the
queue's ``managers`` group; every queue for a superuser), over the last ``days`` days
(:data:`DAYS`, the person's time zone: Django's current one):

- ``waiting``: items pending now; ``overdue``: of those, past their due time;
- ``per_day``: decisions per calendar day, oldest first, split by who decided
  (:data:`DECIDERS`: people, an approval policy or standing approval, anything else: an API or
  AG-UI client, the expiry);
- ``p50`` / ``p90``: time from the request to its decision, in seconds (nearest rank: the
  shortest time at least half / nine tenths of the decisions took), None without decisions.

Five queries whatever the number of items, each on an index of ``inbox.Item``: waiting by
``interrupt_queue_wf`` (queue, status, workflow: covering); overdue (of every queue, kept for
the user's: few rows) and the next due time by ``interrupt_due`` and ``interrupt_queue_due``;
the window's decisions (counted per day and decider; their durations) by
``interrupt_queue_decided`` (queue, status, decided_at: the window's rows only). Days are
bucketed by comparing ``decided_at`` with each day's start (no date function per row),
durations are the database's own arithmetic (:class:`SecondsBetween`), and the percentiles are
taken here from the sorted durations (:func:`nearest_rank`).
``bench/bench_dashboard.py`` times it with 100,000 items.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    Func,
    QuerySet,
    Value,
    When,
)
from django.utils import timezone

from ...inbox.items.policy_gate import by_policy
from ...inbox.items.selectors import managed_queues_for
from ...inbox.models import Item, ItemStatus, Queue

__all__ = ["DAYS", "DECIDERS", "Dashboard", "Row", "SecondsBetween", "dashboard_figures", "nearest_rank"]

User = AbstractBaseUser | AnonymousUser

DAYS = (7, 14, 30)
"""The windows a dashboard may show, in days; the first page shows :data:`DEFAULT_DAYS`."""
DEFAULT_DAYS = 14
DECIDERS = ("people", "policy", "other")
"""Who decided: a person, an approval policy (or a standing approval), anything else."""


@dataclass
class Row:
    """One queue and workflow: its figures over the window (see the module docstring)."""

    queue: Queue
    workflow: str
    waiting: int = 0
    overdue: int = 0
    per_day: list[dict[str, int]] = field(default_factory=list)
    p50: float | None = None
    p90: float | None = None

    @property
    def decided(self) -> dict[str, int]:
        """Decisions in the window by who decided: ``{"people": n, "policy": n, "other": n}``."""
        return {kind: sum(day[kind] for day in self.per_day) for kind in DECIDERS}

    @property
    def decided_total(self) -> int:
        return sum(self.decided.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue.slug,
            "queue_name": self.queue.name,
            "workflow": self.workflow,
            "waiting": self.waiting,
            "overdue": self.overdue,
            "decided": self.decided,
            "per_day": self.per_day,
            "p50_seconds": self.p50,
            "p90_seconds": self.p90,
        }


@dataclass
class Dashboard:
    """Every row of the user's queues, the window's days (oldest first) and when it was read."""

    days: list[dt.date]
    rows: list[Row]
    queues: list[Queue]
    now: dt.datetime
    next_due: dt.datetime | None
    """The earliest due time still ahead among the items waiting: when "overdue" changes next."""

    def as_json(self) -> dict[str, Any]:
        return {
            "days": [day.isoformat() for day in self.days],
            "time_zone": str(timezone.get_current_timezone()),
            "now": self.now.isoformat(),
            "next_due": self.next_due.isoformat() if self.next_due else None,
            "rows": [row.as_json() for row in self.rows],
        }


def _decider() -> Case:
    return Case(
        When(decided_by__isnull=False, then=Value("people")),
        When(by_policy(), then=Value("policy")),
        default=Value("other"),
    )


def _day(starts: list[dt.datetime]) -> Case:
    """The window's day (0 = the first) of ``decided_at``: compared with each day's start, the
    person's midnight as an instant (so a day is 23 or 25 hours across a DST change). Plain
    comparisons: no date function per row (SQLite's would be Python's)."""
    return Case(
        *(When(decided_at__lt=start, then=Value(n - 1)) for n, start in enumerate(starts[1:], start=1)),
        default=Value(len(starts) - 1),
    )


class SecondsBetween(Func):
    """``end - start`` in seconds (a float): ``EXTRACT(EPOCH FROM …)``; on SQLite its own
    ``julianday`` (not Django's Python function per row)."""

    output_field = FloatField()
    arg_joiner = " - "
    template = "CAST(EXTRACT(EPOCH FROM (%(expressions)s)) AS double precision)"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="((julianday(%(expressions)s)) * 86400.0)",
            arg_joiner=") - julianday(",
            **extra,
        )


def nearest_rank(ordered: list[float], part: int, whole: int) -> float | None:
    """The nearest-rank ``part/whole`` percentile of ``ordered`` (ascending): its value ranked
    ``ceil(n * part / whole)``, in integers (no float to round wrongly: 70 × 0.9 is not 63 in
    floating point); None when it is empty."""
    if not ordered:
        return None
    return ordered[(len(ordered) * part + whole - 1) // whole - 1]


def _times_to_decision(decided: QuerySet[Item]) -> dict[tuple[int, str], list[float]]:
    """``{(queue_id, workflow): [seconds, …]}`` of ``decided``, each list ascending. The durations
    are read (one float a decision) and sorted here: measured at 100,000 items, a third of the
    CPU time of two window-function queries ranking them in SQLite (bench/bench_dashboard.py)."""
    found: dict[tuple[int, str], list[float]] = {}
    took = SecondsBetween(F("decided_at"), F("created_at"))
    for queue_id, workflow, seconds in (
        decided.annotate(took=took).values_list("queue_id", "workflow", "took").order_by()
    ):
        found.setdefault((queue_id, workflow), []).append(round(seconds, 3))
    for times in found.values():
        times.sort()
    return found


def dashboard_figures(user: User, *, days: int = DEFAULT_DAYS, now: dt.datetime | None = None) -> Dashboard:
    """The figures of every (queue, workflow) of the queues ``user`` manages over the last
    ``days`` days, today included (see the module docstring). A pair with nothing waiting and
    nothing decided in the window is left out.

    Raises:
        ValueError: ``days`` is not one of :data:`DAYS`.
    """
    if days not in DAYS:
        raise ValueError(f"days must be one of {DAYS}")
    now = now or timezone.now()
    zone = timezone.get_current_timezone()
    today = timezone.localtime(now, zone).date()
    window = [today - dt.timedelta(days=n) for n in range(days - 1, -1, -1)]
    starts = [dt.datetime.combine(day, dt.time.min, tzinfo=zone) for day in window]
    queues = list(managed_queues_for(user).order_by("name"))
    by_pk = {queue.pk: queue for queue in queues}
    rows: dict[tuple[int, str], Row] = {}

    def row(queue_id: int, workflow: str) -> Row:
        if (queue_id, workflow) not in rows:
            empty = [{"date": day.isoformat(), **dict.fromkeys(DECIDERS, 0)} for day in window]  # type: ignore[dict-item]
            rows[(queue_id, workflow)] = Row(queue=by_pk[queue_id], workflow=workflow, per_day=empty)
        return rows[(queue_id, workflow)]

    pending = Item.objects.filter(status=ItemStatus.PENDING)
    waiting = pending.filter(queue_id__in=list(by_pk)).values_list("queue_id", "workflow").annotate(n=Count("id"))
    for queue_id, workflow, n in waiting.order_by():
        row(queue_id, workflow).waiting = n
    # Every queue's overdue items, on (status, due_at): few, where "these queues" would walk them all.
    overdue = pending.filter(due_at__lte=now).values_list("queue_id", "workflow").annotate(n=Count("id"))
    for queue_id, workflow, n in overdue.order_by():
        if queue_id in by_pk:
            row(queue_id, workflow).overdue = n
    ahead = pending.filter(queue_id__in=list(by_pk), due_at__gt=now).order_by("due_at")
    next_due = ahead.values_list("due_at", flat=True).first()

    # Bounded on both sides: SQLite's planner then takes interrupt_queue_decided (one side: a
    # walk of every decided item on interrupt_queue_wf, as if it saved the GROUP BY's sort).
    end = dt.datetime.combine(today + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
    decided = Item.objects.filter(
        queue_id__in=list(by_pk), status=ItemStatus.RESOLVED, decided_at__gte=starts[0], decided_at__lt=end
    )
    per_day = (
        decided.annotate(day=_day(starts), decider=_decider())
        .values_list("queue_id", "workflow", "day", "decider")
        .annotate(n=Count("id"))
        .order_by()
    )
    for queue_id, workflow, day, decider, n in per_day:
        row(queue_id, workflow).per_day[day][decider] += n
    for key, times in _times_to_decision(decided).items():
        row(*key).p50, row(*key).p90 = nearest_rank(times, 1, 2), nearest_rank(times, 9, 10)

    ordered = sorted(rows.values(), key=lambda r: (r.queue.name.lower(), r.workflow))
    return Dashboard(days=window, rows=ordered, queues=queues, now=now, next_due=next_due)
