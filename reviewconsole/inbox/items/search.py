"""The inbox's text search: which rows hold the searched text, as a substring of ``search_text``.

The search is a substring match of the folded query (``assignment.fold``) in the folded text, mid-word
too ("old v" finds "Gold VIP"). On SQLite it is ``LIKE '%text%'`` (a scan). On PostgreSQL, when the
query has words whose boundaries the query itself shows, the words index (``interrupt_search_words``
on the stored column ``search_words``, ``inbox`` migration 0013) narrows the rows first, and
``strpos`` checks the substring on those:

- a word with a separator on both sides in the query ("order" in "my order 976 arrived") is a whole
  word of every item holding the text: the index must have it;
- the last word, with a separator before it only ("654321" in "complaint 654321"), begins a word
  of such an item: the index must have a word with that prefix (asked only when there is no whole
  word: a prefix reads every word it begins);
- the first word, with none before it ("my"), may end a longer word ("xmy"): not asked.

A query with none of those (one word: "acme", "o-"), with a character outside ASCII (whether
``[[:alnum:]]`` holds it depends on the database's locale) or whose only words are longer than the
index keeps (255 characters) is answered by the substring alone (``LIKE``, the trigram index of
migration 0011), as before. Either way the rows are exactly those holding the text.
"""

from __future__ import annotations

import re

from django.db import connections
from django.db.models import BooleanField, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import StrIndex

__all__ = ["WORD_MAX", "matching", "words_query"]

WORD_MAX = 255
"""The longest word the index holds whole (migration 0013 cuts longer ones to this many characters)."""

_WORD = re.compile(r"[a-z0-9]+")


def words_query(text: str) -> str | None:
    """The ``tsquery`` (its text, for ``::tsquery``) every item holding the folded ``text`` matches in
    the words index, or None when the query shows no word the index can answer (see the module).

    ``"my order 976 arrived"`` → ``"'order' & '976'"``; ``"complaint 654321"`` → ``"'654321':*"``;
    ``"acme"``, ``"café"`` → None. Words are ``[a-z0-9]`` runs, so they need no quoting.
    """
    if not text.isascii():
        return None
    whole, prefix = [], None
    for word in _WORD.finditer(text):
        if word.start() == 0 or len(word.group()) > WORD_MAX:
            continue  # may end a longer word / longer than the index keeps
        if word.end() < len(text):
            whole.append(f"'{word.group()}'")
        else:
            prefix = f"'{word.group()}':*"
    if whole:
        return " & ".join(dict.fromkeys(whole))
    return prefix


def matching(rows: QuerySet, text: str) -> QuerySet:
    """``rows`` whose ``search_text`` holds the folded ``text``: by the words index and ``strpos`` on
    PostgreSQL when :func:`words_query` has a query, else ``LIKE '%text%'`` (``%`` and ``_`` literal)."""
    query = words_query(text) if connections[rows.db].vendor == "postgresql" else None
    if query is None:
        return rows.filter(search_text__contains=text)
    # strpos, not LIKE: LIKE would let the planner AND in the trigram index, whose scan is the cost
    # this avoids. ``search_words``: the column migration 0013 adds (not in the model).
    words = RawSQL('"inbox_item"."search_words" @@ %s::tsquery', [query], BooleanField())
    return rows.alias(found_at=StrIndex("search_text", Value(text))).filter(found_at__gt=0).filter(words)
