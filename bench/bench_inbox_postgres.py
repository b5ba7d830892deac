"""The inbox at a million pending items on PostgreSQL: server time of its pages, and their plans.

Run on its own (PostgreSQL 13+; the role may create databases)::

    DATABASE_URL=postgres://user:pass@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/bench_inbox_postgres.py            # 1,000,000 pending + 100,000 decided
    .venv/bin/python bench/bench_inbox_postgres.py 20000 --decided 2000 --repeat 5 --keep

It creates a throwaway database (``--database``, default ``reviewconsole_bench_inbox``) next to
the one ``DATABASE_URL`` names, migrates it, adds the demo data (users, queues) and fills it in SQL
(``generate_series``, one statement per kind: no ORM row by row): the pending items over the demo
queues as ``bench_inbox.py`` does (70% support, 20% sales, 10% finance; 1% overdue) and decided
ones (a fifth decided by an approval policy); the search indexes (``inbox`` migrations 0011, the
trigrams, and 0013, the words: its column is filled as the rows go in) are built after the rows,
then ``VACUUM ANALYZE``. It times, median of ``--repeat`` runs, in milliseconds, the whole Django
request in-process (middleware, the selector's queries over loopback, the template) for the demo
``manager`` (every queue): its wall time, this process's CPU time, and the time its queries took
(sent to answered, PostgreSQL's work plus loopback), for:

- the first page (the counts per queue not cached), and again with them cached;
- filtered pages: one queue and "decided by policy", one queue and "unclaimed";
- text searches: a rare phrase (one item), a phrase of about 0.1% of the items, and one in
  every item (the list order finds a page at once).

Then it prints PostgreSQL's ``EXPLAIN (ANALYZE, BUFFERS)`` of every query on ``inbox_item`` of
those pages (each shape once; a search's own query once per search) and drops the database (unless
``--keep``). The target (issue 18) is < 100 ms each.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_inbox import prepare  # noqa: E402 (after the path)

POLICY = "policy: small refunds"
SEARCH_MIGRATIONS = ("0011_item_search_trigram", "0013_item_search_words")
"""The ``inbox`` migrations whose search indexes :func:`fill` builds after the rows (each has
``INDEX`` and ``create``)."""
RARE = 654_321
TARGET_MS = 100.0
"""Issue 18's target for each page, in wall ms of the whole request."""


def pages(count: int) -> dict[str, dict[str, str]]:
    """The pages timed: name → the inbox's query string."""
    rare = min(RARE, count)
    return {
        "first page": {},
        "queue + decided by policy": {"queue": "support", "by_policy": "1"},
        "queue + unclaimed": {"queue": "finance", "unclaimed": "1"},
        "search: one item": {"q": f"complaint {rare} "},
        "search: ~0.1% of items": {"q": "my order 976 arrived"},
        "search: every item": {"q": "arrived late"},
    }


def _queue_case() -> str:
    """SQL picking the queue of row ``n``: 70% support, 20% sales, 10% finance."""
    from reviewconsole.inbox.models import Queue

    ids = {q.slug: q.pk for q in Queue.objects.filter(slug__in=["support", "sales", "finance"])}
    return f"CASE WHEN n % 10 < 7 THEN {ids['support']} WHEN n % 10 < 9 THEN {ids['sales']} ELSE {ids['finance']} END"


def _insert_sql(first: int, last: int, session_id: str, decided: bool) -> str:
    """One ``INSERT … SELECT … FROM generate_series(first, last)`` of waiting or decided items."""
    queue = _queue_case()
    slug = "CASE WHEN n % 10 < 7 THEN 'support' WHEN n % 10 < 9 THEN 'sales' ELSE 'finance' END"
    title = "'Customer ' || n || ': my order ' || (n % 977) || ' arrived late'"
    message = f"'Please review the reply to complaint ' || n || ' (' || {slug} || ')'"
    if decided:
        status, decision = "'resolved'", "'approve'"
        label = f"CASE WHEN n % 5 = 0 THEN '{POLICY}' ELSE 'reviewer' END"
        decided_at, due = "now() - n * interval '1 second'", "NULL"
    else:
        status, decision, label, decided_at = "'pending'", "''", "''", "NULL"
        due = "CASE WHEN n % 100 = 0 THEN now() - (n % 60) * interval '1 minute' END"
    return f"""
        INSERT INTO inbox_item (
            interrupt_id, local_id, kind, function_name, node_path, branch, invocation_id, message,
            payload, metadata, status, decision, decided_by_label, decided_at, created_at, session_id,
            queue_id, due_at, edit_diff, escalate_to, on_expiry, reason, search_text, title, workflow)
        SELECT 'bench-' || n, '', 'input', '', '', '', '', {message},
            jsonb_build_object('order', n), '{{}}'::jsonb, {status}, {decision}, {label}, {decided_at},
            now() - interval '30 days' + n * interval '2 seconds', '{session_id}',
            {queue}, {due}, '', '', '', '', lower({title} || ' ' || {message} || ' ' || n), {title}, 'email-review'
        FROM generate_series({first}, {last}) AS n"""


def fill(pending: int, decided: int) -> None:
    """Insert ``pending`` waiting and ``decided`` decided items in SQL (``generate_series``), build
    the search indexes after them, then ``VACUUM ANALYZE``."""
    from django.db import connection

    from reviewconsole.workflow_sessions.models import WorkflowSession

    session = WorkflowSession.objects.create(workflow="email-review", user_id="bench", title="bench")
    migrations = [import_module(f"reviewconsole.inbox.migrations.{name}") for name in SEARCH_MIGRATIONS]
    with connection.cursor() as cursor:
        for migration in migrations:  # built once, after the rows: faster
            cursor.execute(f"DROP INDEX IF EXISTS {migration.INDEX}")
        cursor.execute(_insert_sql(1, pending, session.pk, decided=False))
        if decided:
            cursor.execute(_insert_sql(pending + 1, pending + decided, session.pk, decided=True))
    with connection.schema_editor() as editor:
        for migration in migrations:
            migration.create(None, editor)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE inbox_item")


def measure(count: int, repeat: int) -> dict[str, tuple[float, float, float, int]]:
    """Per page of :func:`pages`: medians of the request's wall time, this process's CPU time and
    the time its queries took as Django saw them (sent to answered), in ms, and how many queries."""
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="manager"))

    def timed(params: dict[str, str], cold: bool) -> tuple[float, float, float, int]:
        wall, cpu, sql, queries = [], [], [], 0
        for _ in range(repeat):
            if cold:
                cache.clear()  # the counts per queue are cached under the queues' versions: count again
            started, clock = time.process_time(), time.perf_counter()
            with CaptureQueriesContext(connection) as captured:
                response = client.get("/inbox/", params)
            wall.append((time.perf_counter() - clock) * 1000)
            cpu.append((time.process_time() - started) * 1000)
            assert response.status_code == 200, (params, response.status_code)
            sql.append(sum(float(q["time"]) for q in captured.captured_queries) * 1000)
            queries = len(captured.captured_queries)
        return statistics.median(wall), statistics.median(cpu), statistics.median(sql), queries

    figures = {}
    for name, params in pages(count).items():
        figures[name] = timed(params, cold=True)
        if not params:
            figures["  … counts cached"] = timed({}, cold=False)
    return figures


def plans(count: int) -> list[tuple[str, str, list[str]]]:
    """``(page, sql, EXPLAIN (ANALYZE, BUFFERS) lines)`` for every query on ``inbox_item`` of the
    pages of :func:`pages` (the same query for another queue or page is shown once; the query of a
    search, which its words decide, once per search)."""
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="manager"))
    found, shapes = [], set()
    for name, params in pages(count).items():
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            client.get("/inbox/", params)
        with connection.cursor() as cursor:
            for query in captured.captured_queries:
                sql = query["sql"]
                if not sql.startswith("SELECT") or '"inbox_item"' not in sql:
                    continue
                # A search's own query once per search (its words decide its plan), the others once.
                shape = (name if "search_" in sql else "", re.sub(r"\b\d+\b|'[^']*'", "?", sql))
                if shape in shapes:
                    continue
                shapes.add(shape)
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
                found.append((name, sql, [row[0] for row in cursor.fetchall()]))
    return found


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench_inbox_postgres.py",
        description=(
            "Time the inbox with many pending items on a throwaway PostgreSQL database next to "
            "DATABASE_URL's (wall time of the request in-process, median of --repeat runs, in ms) "
            "and print EXPLAIN ANALYZE of its queries."
        ),
    )
    parser.add_argument("count", nargs="?", type=int, default=1_000_000, help="pending items (default 1000000)")
    parser.add_argument("--decided", type=int, default=100_000, help="decided items (default 100000)")
    parser.add_argument("--repeat", type=int, default=10, help="runs per measurement; the median (default 10)")
    parser.add_argument("--database", default="reviewconsole_bench_inbox", help="the throwaway database's name")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args(argv)
    if args.count < 1 or args.repeat < 1 or args.decided < 0:
        parser.error("count and --repeat must be at least 1, --decided at least 0")
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", args.database):
        parser.error("--database: lower-case letters, digits and _ only")
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        parser.error("set DATABASE_URL to a PostgreSQL database (the throwaway one is created next to it)")
    return args


def _admin(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    server = urlsplit(os.environ["DATABASE_URL"])
    admin_url = urlunsplit(server._replace(path="/postgres"))
    _admin(admin_url, f"DROP DATABASE IF EXISTS {args.database}")
    _admin(admin_url, f"CREATE DATABASE {args.database}")
    os.environ.update(
        DATABASE_URL=urlunsplit(server._replace(path=f"/{args.database}")),
        DB_POOL_MAX_SIZE="0",
        DJANGO_SETTINGS_MODULE="reviewconsole.settings.embedded",
        REVIEWCONSOLE_VAR_DIR=tempfile.mkdtemp(prefix="reviewconsole-bench-"),
        DEMO_PASSWORD="bench-password-1",
        REVIEWCONSOLE_NOTIFY_EMAIL="0",
    )
    try:
        prepare()
        started = time.perf_counter()
        fill(args.count, args.decided)
        print(
            f"{args.count:,} pending + {args.decided:,} decided items inserted and indexed in "
            f"{time.perf_counter() - started:.1f} s (PostgreSQL, database {args.database})",
            flush=True,
        )
        print(f"  {'page (median of ' + str(args.repeat) + ')':<28} {'wall ms':>9} {'CPU ms':>8} {'SQL ms':>8} queries")
        timed = measure(args.count, args.repeat)
        for name, (wall, cpu, sql, queries) in timed.items():
            print(f"  {name:<28} {wall:9.1f} {cpu:8.1f} {sql:8.1f} {queries:7}", flush=True)
        print(f"  load average {os.getloadavg()[0]:.2f} (1 min)")
        over = [name for name, (wall, *_) in timed.items() if wall >= TARGET_MS]
        verdict = "met" if not over else "NOT met (" + ", ".join(over) + ")"
        print(f"  target every page < {TARGET_MS:g} ms wall at {args.count:,} items: {verdict}")
        print("\nEXPLAIN (ANALYZE, BUFFERS) of the pages' inbox_item queries (each shape once; a search's per search):")
        for name, sql, plan in plans(args.count):
            where = sql[sql.index(" FROM ") :] if " FROM " in sql else sql
            print(f"\n[{name}] SELECT …{where[:600]}{'…' if len(where) > 600 else ''}")
            for line in plan:
                print(f"   {line}")
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            _admin(admin_url, f"DROP DATABASE IF EXISTS {args.database}")


if __name__ == "__main__":
    main(sys.argv[1:])
