"""The inbox's text search on the test run's database (SQLite in ``./test``: a scan), and the
migrations that index it on PostgreSQL (``inbox`` 0011 and 0013) applying and reversing on either."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviewconsole.inbox.items.assignment import fold, item_search_text, search_text
from reviewconsole.inbox.models import Item, Queue
from reviewconsole.inbox.pages.headings import heading
from tests.inbox.search_cases import assert_search_finds, found, make_searchable

INDEX = "interrupt_search_trgm"
WORDS_INDEX = "interrupt_search_words"


def test_search_finds_substrings_in_titles_messages_and_payloads(manager, demo):
    made = make_searchable({q.slug: q for q in Queue.objects.all()})
    assert_search_finds(manager, made)


def _indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "inbox_item"))


def _columns() -> set[str]:
    with connection.cursor() as cursor:
        return {column.name for column in connection.introspection.get_table_description(cursor, "inbox_item")}


def _migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


@pytest.fixture
def back_to_latest():
    """Migrate ``inbox`` forward to its latest migration after the test (a later test needs 0013's
    column on PostgreSQL)."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("inbox"))


@pytest.mark.django_db(transaction=True)
def test_the_search_index_migrations_apply_and_reverse(back_to_latest):
    expected = connection.vendor == "postgresql"  # SQLite: no-ops, the search scans
    assert (INDEX in _indexes()) is expected
    assert (WORDS_INDEX in _indexes()) is expected
    assert ("search_words" in _columns()) is expected
    _migrate(("inbox", "0012_item_search_text_headings"))
    assert WORDS_INDEX not in _indexes() and "search_words" not in _columns()
    assert (INDEX in _indexes()) is expected
    _migrate(("inbox", "0010_decided_order"))
    assert INDEX not in _indexes()
    _migrate(("inbox", "0011_item_search_trigram"))
    assert (INDEX in _indexes()) is expected
    _migrate(("inbox", "0013_item_search_words"))
    assert (WORDS_INDEX in _indexes()) is expected
    assert ("search_words" in _columns()) is expected


def test_search_finds_what_the_row_says(start_session, personas):
    """Found in a new user's trial: "refund $250" found nothing, the row's words were not indexed."""
    _, [large] = start_session("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    session, [submit] = start_session("refund-approval", {"order_id": "B-40", "amount": 40, "reason": "Late"})
    user = personas.other_reviewer
    assert found(user, "refund $250.00 for order a-1001") == {large.pk}
    assert found(user, "over the $100.00 policy limit") == {large.pk}
    assert found(user, "submit refund $40.00") == {submit.pk}
    decided = Item.objects.get(session=session, function_name="ask_for_approval")  # the rule decided it
    assert found(user, "approved by policy", status="resolved") == {decided.pk}


@pytest.mark.django_db(transaction=True)
def test_the_migration_refills_the_search_text_of_existing_items(start_session, back_to_latest):
    _, [item] = start_session("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    raw = search_text(item.title, item.message, item.payload)  # what rows held before 0012
    Item.objects.filter(pk=item.pk).update(search_text=raw)
    _migrate(("inbox", "0011_item_search_trigram"))
    _migrate(("inbox", "0012_item_search_text_headings"))
    item.refresh_from_db()
    assert all(word in item.search_text for word in raw.split())
    assert "refund $250.00 for order a-1001 — arrived broken" in item.search_text
    assert "a person must approve it." in item.search_text


@pytest.mark.parametrize("words", [12, 80])  # the summary: the draft whole; cut with "…"
def test_a_summary_the_message_holds_is_stored_once(words):
    """Issue 18 target 7: an email draft's summary is the draft its message quotes (cut at 300
    characters with "…"), and the search text held it twice (≈ 280 B more per revise loop of an
    email review). Every part of the message is still found."""
    draft = " ".join(f"Word{n} of the draft," for n in range(words)) + " Kind regards"
    message = f"Please review the following draft email.\n\n---\n{draft}\n---"
    item = Item(workflow="email-review", message=message, metadata={"kind": "email_draft"})
    assert heading(item).summary.removesuffix("…")[:40] == draft[:40]
    text = item_search_text(item)
    assert text.count("word1 of the draft") == 1
    assert fold(" ".join(message.split())) in text


def test_texts_neither_holds_are_both_kept():
    item = Item(workflow="email-review", title="Refund A-1", message="Card charged twice", metadata={})
    text = item_search_text(item)
    assert "refund a-1" in text and "card charged twice" in text


def _as_before(item: Item) -> str:
    """The search text as it was before the summary could be left out (edb9127)."""
    named = heading(item)
    return search_text(named.title, named.summary, item.title, item.message, item.payload)


@pytest.mark.parametrize(
    ("title", "message", "query"),
    [
        # Found by an attack on the first version, which dropped any text another one held:
        ("Invoice 4711", "Please pay by Friday. Attached: Invoice 4711.", "invoice 4711 please"),  # title, then text
        ("Quarterly report", "lorem ipsum " * 2000 + "End of the quarterly report", "quarterly report"),  # past the cut
        ("Wait…", "Wait for the carrier's answer", "wait…"),  # a title's own ellipsis
        ("Note", "Wait…", "note wait…"),
    ],
)
def test_what_the_search_found_before_it_still_finds(title, message, query):
    item = Item(workflow="invoices", title=title, message=message, metadata={})
    assert fold(query) in _as_before(item)
    assert fold(query) in item_search_text(item)
