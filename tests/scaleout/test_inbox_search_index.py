"""The inbox's text search on PostgreSQL: the same finds as on SQLite (``tests/inbox/search_cases.py``),
a substring search still when the words index (``inbox`` migration 0013) narrows it, answered by the
trigram index of migration 0011 for a query without whole words, by the words index for one with them,
once the table is large enough for the planner to prefer them to walking a queue's page in order."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewconsole.inbox.items.assignment import fold
from reviewconsole.inbox.items.search import WORD_MAX
from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page
from reviewconsole.inbox.models import Item, ItemStatus, Queue
from tests.inbox.factories import make_items
from tests.inbox.search_cases import assert_search_finds, found, make_searchable

pytestmark = [pytest.mark.scaleout]

LONG = "a" * (WORD_MAX + 45)

TEXTS = [
    "My order 976 arrived late",
    "Your order 976, arrived",  # the words, not the text "order 976 arrived"
    "my order 9760 arrived",  # "976" begins a word here: not a whole word
    "Dummy order 976 arrived",  # "my" ends a word: the first word may
    "complaint 6543210 opened",
    "complaint 654321",
    "sent 1e5x units",  # one word; to_tsvector's parser would split it into "1e5" and "x"
    "sent 1e5 x units",
    f"x {LONG} y",  # a word longer than the index keeps whole
    "off_code 50% order",
    "order-976-arrived",
]
QUERIES = [
    "my order 976 arrived",
    "order 976 arrived",
    "complaint 654321",
    "complaint 654321 opened",
    "plaint 6543210 op",
    "sent 1e5x units",
    "1e5 x",
    f"x {'a' * WORD_MAX} y",
    f"x {LONG} y",
    f"x {'a' * 200}",
    f"x {LONG}",  # longer than the index keeps: no word to ask, the trigram index answers
    "f_code 50",
    "-976-",
    "order 976",
    "nowhere 976 at all",
]


def _search_sql(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if "search_text" in q["sql"] and "LIMIT 2001" in q["sql"]]


def test_search_finds_the_same_on_postgresql(postgres, manager, demo):
    made = make_searchable({q.slug: q for q in Queue.objects.all()})
    assert_search_finds(manager, made)


def test_a_search_by_words_finds_exactly_the_items_holding_the_text(postgres, manager, demo):
    support = Queue.objects.get(slug="support")
    for text in TEXTS:
        make_items(support, 1, title="Item", message=text)
    texts = dict(Item.objects.filter(status=ItemStatus.PENDING).values_list("pk", "search_text"))
    for q in QUERIES:
        with CaptureQueriesContext(connection) as captured:
            got = found(manager, q)
        assert got == {pk for pk, text in texts.items() if fold(q) in text}, q
        [sql] = _search_sql(captured)
        assert ("search_words" in sql) is (q != f"x {LONG}"), (q, sql)


def test_a_search_by_words_pages_in_list_order(postgres, manager, demo):
    queues = {q.slug: q for q in Queue.objects.all()}
    now = timezone.now()
    made = make_items(queues["support"], 40, title="Refund for order 4471 today")
    made += make_items(queues["sales"], 25, title="Refund for order 4471 today", start=now - dt.timedelta(hours=3))
    late = make_items(queues["finance"], 3, title="Refund for order 4471 today", due_at=now - dt.timedelta(minutes=5))
    make_items(queues["support"], 30, title="Refund for order 4472 today")
    expected = [row.pk for row in late] + [row.pk for row in sorted(made, key=lambda r: (r.created_at, r.pk))]
    filters = InboxFilters(q="for order 4471 today")
    with CaptureQueriesContext(connection) as captured:
        first = inbox_page(manager, filters, size=50)
    assert "search_words" in _search_sql(captured)[0]
    second = inbox_page(manager, filters, after=first.next_cursor, size=50)
    assert [i.pk for i in first.items] + [i.pk for i in second.items] == expected
    assert second.next_cursor is None
    assert all(i.status == ItemStatus.PENDING for i in first.items)


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        # What autovacuum does to a busy table: the GIN indexes' pending lists merged, statistics.
        cursor.execute("SELECT gin_clean_pending_list('interrupt_search_trgm')")
        cursor.execute("SELECT gin_clean_pending_list('interrupt_search_words')")
        cursor.execute("ANALYZE inbox_item")
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_rare_search_reads_an_index(postgres, manager, demo):
    """One word (a substring of any word): the trigram index; whole words: the words index."""
    queues = {q.slug: q for q in Queue.objects.all()}
    make_items(queues["support"], 5000, title="Routine order question", message="Nothing special here")
    rare = make_items(queues["support"], 1, title="Refund order o4471 today")
    for q, index in (("o4471", "interrupt_search_trgm"), ("order o4471 today", "interrupt_search_words")):
        with CaptureQueriesContext(connection) as captured:
            assert found(manager, q, queue="support") == {rare[0].pk}
        [sql] = _search_sql(captured)
        plan = _plan(sql)
        assert index in plan, (q, plan)
