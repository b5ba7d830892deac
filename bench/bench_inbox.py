"""The inbox with many pending items: server time to render it, and the query plans behind it.

Run on its own (a throwaway SQLite database, the embedded default's settings)::

    .venv/bin/python bench/bench_inbox.py            # 100,000 pending items
    .venv/bin/python bench/bench_inbox.py 20000 --repeat 20
    .venv/bin/python bench/bench_inbox.py --help

It fills the queues (70% support, 20% sales, 10% finance; 1% of the items overdue), runs
``ANALYZE``, then times, median of ``--repeat`` runs, in milliseconds of server time (the whole
Django request in-process: middleware, the selector's queries, the template):

- the inbox page as the demo ``manager`` sees it (every queue), and as a reviewer of one queue;
- its JSON snapshot (what a page re-reads after a change); the second page (a keyset cursor);
- filters by workflow, by "claimed by me", and a text search (the worst case: a scan);
- a catch-up request (``changes.json``).

Then it prints SQLite's ``EXPLAIN QUERY PLAN`` for every query of the page. ``tests/inbox/
test_query_plans.py`` asserts the plans use the indexes (on 3,000 items);
``tests/bench/test_bench_inbox_cli.py`` checks the command line.
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

QUEUES = {"support": (0.7, "email-review"), "sales": (0.2, "vip-discount"), "finance": (0.1, "refund-approval")}


def fill(count: int) -> None:
    """Insert ``count`` pending items over the demo queues (no workflow runs: rows only)."""
    from django.utils import timezone

    from reviewconsole.inbox.items.assignment import search_text
    from reviewconsole.inbox.models import Item, Queue
    from reviewconsole.workflow_sessions.models import WorkflowSession

    now = timezone.now()
    start = now - dt.timedelta(days=30)
    field = Item._meta.get_field("created_at")
    field.auto_now_add = False  # type: ignore[attr-defined]  # keep the spread of created_at below
    n = 0
    try:
        for slug, (share, workflow) in QUEUES.items():
            queue = Queue.objects.get(slug=slug)
            session = WorkflowSession.objects.create(workflow=workflow, user_id="bench", title="bench")
            rows = []
            for i in range(int(count * share)):
                n += 1
                title = f"Customer {n}: my order {n % 977} arrived late"
                message = f"Please review the reply to complaint {n} ({slug})"
                rows.append(
                    Item(
                        session=session,
                        workflow=workflow,
                        title=title,
                        interrupt_id=f"bench-{slug}-{i}",
                        kind="input",
                        message=message,
                        payload={"order": n, "note": "late delivery"},
                        search_text=search_text(title, message, {"order": n}),
                        queue=queue,
                        created_at=start + dt.timedelta(seconds=25 * n),
                        due_at=now - dt.timedelta(minutes=n % 60) if n % 100 == 0 else None,
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


def _timed(call: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(repeat: int = 10) -> dict[str, float]:
    """Median server time (ms) of each request (see the module docstring)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    from reviewconsole.inbox.models import Queue

    users = get_user_model()
    manager = users.objects.get(username="manager")
    single, _ = users.objects.get_or_create(username="bench-sales")
    single.groups.set([Group.objects.get(name="queue:sales")])
    every, one = Client(), Client()
    every.force_login(manager)
    one.force_login(single)

    def get(client: Client, url: str, **params: str) -> Any:
        response = client.get(url, params)
        assert response.status_code == 200, (url, response.status_code)
        return response

    from reviewconsole.inbox.conf import inbox_setting
    from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page

    cursor = inbox_page(manager, InboxFilters(), size=inbox_setting("PAGE_SIZE")).next_cursor or ""
    since = ",".join(f"{q.pk}:{max(q.version - 5, 0)}" for q in Queue.objects.all())
    from django.core.cache import cache

    def cold(client: Client, url: str) -> Any:
        cache.clear()  # the counts per queue are cached under the queues' versions: count again
        return get(client, url)

    return {
        "inbox page, every queue": _timed(lambda: cold(every, "/inbox/"), repeat),
        "  … counts cached": _timed(lambda: get(every, "/inbox/"), repeat),
        "inbox page, one queue": _timed(lambda: cold(one, "/inbox/"), repeat),
        "items.json snapshot": _timed(lambda: get(every, "/inbox/items.json"), repeat),
        "second page (cursor)": _timed(lambda: get(every, "/inbox/", after=cursor), repeat),
        "filter: workflow": _timed(lambda: get(every, "/inbox/", workflow="vip-discount"), repeat),
        "filter: claimed by me": _timed(lambda: get(every, "/inbox/", mine="1"), repeat),
        "search (scans)": _timed(lambda: get(every, "/inbox/", q="order 12345 "), max(1, repeat // 3)),
        "changes.json catch-up": _timed(lambda: get(every, "/inbox/changes.json", since=since), repeat),
    }


PLANNED = [
    ("the first page (overdue first)", {}),
    ("a later page (waiting items, after a cursor)", {"after": None}),
    ("filtered by workflow", {"workflow": "vip-discount"}),
    ("claimed by me", {"mine": "1"}),
    ("unclaimed, one queue", {"unclaimed": "1", "queue": "finance"}),
    ("decided", {"status": "resolved"}),
    ("my decisions", {"my_decisions": "1"}),
]


def plans() -> list[tuple[str, str, list[str]]]:
    """``(request, sql, plan lines)`` for every distinct query on ``inbox_item`` of the
    manager's inbox pages in :data:`PLANNED` (the same query for another queue is shown once)."""
    import re

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page

    manager = get_user_model().objects.get(username="manager")
    client = Client()
    client.force_login(manager)
    first = inbox_page(manager, InboxFilters(), size=50)
    later = first
    while later.next_cursor and later.next_cursor.startswith("o|"):
        later = inbox_page(manager, InboxFilters(), after=later.next_cursor, size=50)
    found: list[tuple[str, str, list[str]]] = []
    shapes: set[str] = set()
    for name, params in PLANNED:
        query = {k: (v if v is not None else later.next_cursor or "") for k, v in params.items()}
        with CaptureQueriesContext(connection) as captured:
            client.get("/inbox/", query)
        with connection.cursor() as cursor:
            for captured_query in captured.captured_queries:
                sql = captured_query["sql"]
                if not sql.startswith("SELECT") or '"inbox_item"' not in sql:
                    continue
                shape = re.sub(r"\b\d+\b|'[^']*'", "?", sql)
                if shape in shapes:
                    continue
                shapes.add(shape)
                cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
                found.append((name, sql, [row[-1] for row in cursor.fetchall()]))
    return found


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench_inbox.py",
        description=(
            "Time the inbox with many pending items on a throwaway SQLite database (server time, "
            "median of --repeat runs, in ms) and print the query plans of its pages."
        ),
    )
    parser.add_argument("count", nargs="?", type=int, default=100_000, help="pending items to insert (default 100000)")
    parser.add_argument("--repeat", type=int, default=10, help="runs per measurement; the median is shown (default 10)")
    args = parser.parse_args(argv)
    if args.count < 1 or args.repeat < 1:
        parser.error("count and --repeat must be at least 1")
    return args


def prepare() -> None:
    """Set Django up on the environment's settings, migrate its database and add the demo data
    (users, queues), so that :func:`fill` and :func:`measure` can run; the test client's host is
    allowed."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS.append("testserver")
    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as devnull:
        call_command("demo", stdout=devnull)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    count, repeat = args.count, args.repeat
    var = tempfile.mkdtemp(prefix="reviewconsole-bench-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="reviewconsole.settings.embedded",
        REVIEWCONSOLE_VAR_DIR=var,
        DEMO_PASSWORD="bench-password-1",
        REVIEWCONSOLE_NOTIFY_EMAIL="0",
    )
    sys.path.insert(0, str(ROOT))
    prepare()
    started = time.perf_counter()
    fill(count)
    print(f"{count:,} pending items inserted in {time.perf_counter() - started:.1f} s (SQLite, {var})")
    for name, ms in measure(repeat).items():
        print(f"  {name:<28} {ms:8.1f} ms")
    print("\nEXPLAIN QUERY PLAN of the inbox pages' queries on inbox_item (each shape once):")
    for name, sql, plan in plans():
        where = sql[sql.index(" FROM ") :] if " FROM " in sql else sql
        print(f"\n[{name}] SELECT …{where[:400]}{'…' if len(where) > 400 else ''}")
        for line in plan:
            print(f"   {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
