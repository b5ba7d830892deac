"""The managers' dashboard with many items: server time to compute and render it, and its query plans.

Run on its own (a throwaway SQLite database, the embedded default's settings)::

    .venv/bin/python bench/bench_dashboard.py                 # 100,000 waiting + 100,000 decided
    .venv/bin/python bench/bench_dashboard.py --pending 20000 --decided 50000 --repeat 20

It fills the demo queues with waiting items as ``bench_inbox.py`` does (70% support, 20% sales,
10% finance; 1% overdue) and with decided ones spread over the last 60 days (60% by people, 30% by
an approval policy, 10% by an API client; each decided 1 minute to 2 days after it was asked),
runs ``ANALYZE``, then times, median of ``--repeat`` runs in milliseconds of CPU time (this
process's ``process_time``: the database is SQLite, in-process; wall time moves with the
machine's load, and is shown beside it): the figures alone
(``dashboard_figures``), the dashboard page and its live panel (the whole Django request
in-process) for the demo ``manager`` (every queue), over 14 and 30 days. Then it prints SQLite's
``EXPLAIN QUERY PLAN`` for each query of the figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_inbox import QUEUES, fill, prepare  # noqa: E402 (after the path)


def _timed(call: Any, repeat: int) -> tuple[float, float]:
    """``(cpu, wall)``: the medians of ``repeat`` calls, in milliseconds."""
    cpu, wall = [], []
    for _ in range(repeat):
        started, clock = time.process_time(), time.perf_counter()
        call()
        cpu.append((time.process_time() - started) * 1000)
        wall.append((time.perf_counter() - clock) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def fill_decided(count: int) -> None:
    """Insert ``count`` decided items over the demo queues, decided in the last 60 days."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from reviewconsole.inbox.models import Item, Queue
    from reviewconsole.workflow_sessions.models import WorkflowSession

    manager = get_user_model().objects.get(username="manager")
    now = timezone.now()
    field = Item._meta.get_field("created_at")
    field.auto_now_add = False  # type: ignore[attr-defined]
    n = 0
    try:
        for slug, (share, workflow) in QUEUES.items():
            queue = Queue.objects.get(slug=slug)
            session = WorkflowSession.objects.create(workflow=workflow, user_id="bench", title="bench decided")
            rows = []
            for i in range(int(count * share)):
                n += 1
                decided_at = now - dt.timedelta(seconds=(n * 5183) % (60 * 86400))
                asked = decided_at - dt.timedelta(seconds=60 + (n * 7919) % (2 * 86400))
                who = n % 10
                rows.append(
                    Item(
                        session=session,
                        workflow=workflow,
                        title=f"Decided {n}",
                        interrupt_id=f"bench-decided-{slug}-{i}",
                        kind="input",
                        queue=queue,
                        status="resolved",
                        decision="approve" if n % 4 else "reject",
                        decided_by=manager if who < 6 else None,
                        decided_by_label="manager" if who < 6 else ("policy: bench" if who < 9 else "client:bench"),
                        created_at=asked,
                        decided_at=decided_at,
                    )
                )
                if len(rows) == 5000:
                    Item.objects.bulk_create(rows)
                    rows = []
            Item.objects.bulk_create(rows)
    finally:
        field.auto_now_add = True  # type: ignore[attr-defined]
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def measure(repeat: int) -> dict[str, tuple[float, float]]:
    """Median ``(cpu, wall)`` ms of the figures, the page and the panel (see the module docstring)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from reviewconsole.console.dashboard.figures import dashboard_figures

    manager = get_user_model().objects.get(username="manager")
    client = Client()
    client.force_login(manager)

    def get(url: str, **params: str) -> Any:
        response = client.get(url, params)
        assert response.status_code == 200, (url, response.status_code)
        return response

    return {
        "figures, 14 days": _timed(lambda: dashboard_figures(manager, days=14), repeat),
        "figures, 30 days": _timed(lambda: dashboard_figures(manager, days=30), repeat),
        "dashboard page, 14 days": _timed(lambda: get("/dashboard/"), repeat),
        "live panel, 30 days": _timed(lambda: get("/dashboard/panel/", days="30"), repeat),
        "figures.json, 14 days": _timed(lambda: get("/dashboard/figures.json"), repeat),
    }


def plans() -> list[tuple[str, list[str]]]:
    """``(sql, plan lines)`` for every query of the figures over 14 days."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reviewconsole.console.dashboard.figures import dashboard_figures

    manager = get_user_model().objects.get(username="manager")
    with CaptureQueriesContext(connection) as captured:
        dashboard_figures(manager, days=14)
    found = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if '"inbox_item"' not in query["sql"]:
                continue
            cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
            found.append((query["sql"], [row[-1] for row in cursor.fetchall()]))
    return found


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench_dashboard.py",
        description=(
            "Time the managers' dashboard with many items on a throwaway SQLite database (server time, "
            "median of --repeat runs, in ms) and print the query plans of its figures."
        ),
    )
    parser.add_argument("--pending", type=int, default=100_000, help="waiting items to insert (default 100000)")
    parser.add_argument("--decided", type=int, default=100_000, help="decided items to insert (default 100000)")
    parser.add_argument("--repeat", type=int, default=10, help="runs per measurement; the median is shown (default 10)")
    args = parser.parse_args(argv)
    if args.pending < 0 or args.decided < 0 or args.repeat < 1:
        parser.error("--pending and --decided must be at least 0, --repeat at least 1")
    return args


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    var = tempfile.mkdtemp(prefix="reviewconsole-bench-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="reviewconsole.settings.embedded",
        REVIEWCONSOLE_VAR_DIR=var,
        DEMO_PASSWORD="bench-password-1",
        REVIEWCONSOLE_NOTIFY_EMAIL="0",
    )
    prepare()
    started = time.perf_counter()
    if args.pending:
        fill(args.pending)
    if args.decided:
        fill_decided(args.decided)
    took = time.perf_counter() - started
    print(f"{args.pending:,} waiting and {args.decided:,} decided items inserted in {took:.1f} s (SQLite, {var})")
    print(f"  {'':<26} {'cpu ms':>8} {'wall ms':>8}   (load average {os.getloadavg()[0]:.1f})")
    for name, (cpu, wall) in measure(args.repeat).items():
        print(f"  {name:<26} {cpu:8.1f} {wall:8.1f}")
    print("\nEXPLAIN QUERY PLAN of the figures' queries on inbox_item:")
    for sql, plan in plans():
        where = sql[sql.index(" FROM ") :] if " FROM " in sql else sql
        print(f"\nSELECT …{where[:300]}{'…' if len(where) > 300 else ''}")
        for line in plan:
            print(f"   {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
