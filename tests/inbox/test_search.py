"""The inbox's text search on the test run's database (SQLite in ``./test``: a scan), and the
migration that indexes it on PostgreSQL (``inbox`` 0011) applying and reversing on either."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviewconsole.inbox.models import Queue
from tests.inbox.search_cases import assert_search_finds, make_searchable

INDEX = "interrupt_search_trgm"


def test_search_finds_substrings_in_titles_messages_and_payloads(manager, demo):
    made = make_searchable({q.slug: q for q in Queue.objects.all()})
    assert_search_finds(manager, made)


def _indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "inbox_item"))


def _migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


@pytest.mark.django_db(transaction=True)
def test_the_search_index_migration_applies_and_reverses():
    expected = connection.vendor == "postgresql"  # SQLite: a no-op, the search scans
    assert (INDEX in _indexes()) is expected
    _migrate(("inbox", "0010_decided_order"))
    assert INDEX not in _indexes()
    _migrate(("inbox", "0011_item_search_trigram"))
    assert (INDEX in _indexes()) is expected
