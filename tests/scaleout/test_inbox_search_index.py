"""The inbox's text search on PostgreSQL: the same finds as on SQLite (``tests/inbox/search_cases.py``),
answered by the trigram index of ``inbox`` migration 0011 once the table is large enough for the
planner to prefer it to walking a queue's page in order."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewconsole.inbox.models import Queue
from tests.inbox.factories import make_items
from tests.inbox.search_cases import assert_search_finds, found, make_searchable

pytestmark = [pytest.mark.scaleout]


def test_search_finds_the_same_on_postgresql(postgres, manager, demo):
    made = make_searchable({q.slug: q for q in Queue.objects.all()})
    assert_search_finds(manager, made)


def test_a_rare_search_reads_the_trigram_index(postgres, manager, demo):
    queues = {q.slug: q for q in Queue.objects.all()}
    make_items(queues["support"], 5000, title="Routine question", message="Nothing special here")
    rare = make_items(queues["support"], 1, title="Refund order o-4471")
    with connection.cursor() as cursor:
        # What autovacuum does to a busy table: the GIN index's pending list merged, statistics.
        cursor.execute("SELECT gin_clean_pending_list('interrupt_search_trgm')")
        cursor.execute("ANALYZE inbox_item")
    with CaptureQueriesContext(connection) as captured:
        assert found(manager, "o-4471", queue="support") == {rare[0].pk}
    # The last: the waiting items (the first, the overdue ones, walk the due index: there are few).
    searches = [q["sql"] for q in captured.captured_queries if "LIKE" in q["sql"]]
    assert searches
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {searches[-1]}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "interrupt_search_trgm" in plan, plan
