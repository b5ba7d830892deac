"""Which words of a search the words index may be asked for (``items/search.words_query``): only
those the query shows whole (a separator on both sides) or, failing any, the last word's beginning;
never the first word (it may end a longer one), nothing outside ASCII, nothing longer than the index
keeps. What a search then finds is checked on PostgreSQL in ``tests/scaleout/test_inbox_search_index.py``
and on SQLite (where the index is never asked) in ``test_search.py``."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.items.search import WORD_MAX, matching, words_query
from reviewconsole.inbox.models import Item


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("my order 976 arrived", "'order' & '976'"),  # "my" may end "dummy", "arrived" begin "arrivederci"
        ("complaint 654321", "'654321':*"),  # no whole word: the last one's beginning
        ("gold vip", "'vip':*"),
        ("refund $250.00 for order a-1001", "'250' & '00' & 'for' & 'order' & 'a'"),
        ("order o-4471", "'o'"),
        ("sent 1e5x units", "'1e5x'"),  # one word (to_tsvector's parser would make "1e5" and "x")
        ("f_c", "'c':*"),  # "_" separates words, as in the index's [[:alnum:]] runs
        ("-order 5-", "'order' & '5'"),  # a separator first: the first word is whole too
        ("a b a b", "'b' & 'a'"),  # each word asked once
        ("acme", None),  # one word: a substring of any word
        ("o-", None),
        ("50%", None),
        ("%", None),
        ("café au lait", None),  # outside ASCII: [[:alnum:]] depends on the database's locale
        (f"x {'a' * (WORD_MAX + 1)}", None),  # longer than the index keeps
        (f"x {'a' * (WORD_MAX + 1)} y", "'y':*"),
        (f"x {'a' * WORD_MAX} y", f"'{'a' * WORD_MAX}'"),
    ],
)
def test_words_query(text, query):
    assert words_query(text) == query


@pytest.mark.django_db
def test_sqlite_searches_by_like_only():
    """SQLite has neither the words column nor its index (migration 0013 is a no-op there)."""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the SQLite path")
    sql = str(matching(Item.objects.all(), "my order 976 arrived").query)
    assert "LIKE" in sql and "search_words" not in sql
