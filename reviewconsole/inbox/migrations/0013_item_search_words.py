"""The inbox's text search by words on PostgreSQL: a full-text (``tsvector``) GIN index of the words
of ``search_text``, which narrows a search before its substring check (``items/search.py``).

The trigram index of 0011 answers ``search_text LIKE '%words%'``, but a phrase whose trigrams every
item has ("complaint", "order") reads their whole posting lists. This adds each item's words as a
stored generated column, ``search_words``: ``inbox_search_words(search_text)``, the maximal runs of
``[[:alnum:]]`` characters as lexemes, as they are (no parser, no dictionary: nothing stemmed,
"1e5x" stays one word where ``to_tsvector`` would split it into "1e5" and "x"), a word longer than
255 characters cut to its first 255 (a ``tsvector`` lexeme is at most 2,047 bytes); and a GIN index
on it. The search asks the index for the query's whole words, then checks the substring.

A column, not an expression index: when the planner scans instead (words every item has), checking
a row reads its stored words (about 0.5 µs) instead of splitting its text again (12 µs for a
150-character text, more for a long payload), up to 2,001 rows a search. Adding it rewrites the
table (about a minute at 1,100,000 items on a 2-core machine, the table locked) and adds about a
third to its size. PostgreSQL computes it on every insert and update: Django does not know the
column (it never names it), so the models are unchanged.

On other databases (SQLite, the embedded default) this migration does nothing. Reversible: drops
the index, the column and the function.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

INDEX = "interrupt_search_words"
FUNCTION = "inbox_search_words"
COLUMN = "search_words"

CREATE_FUNCTION = rf"""
CREATE OR REPLACE FUNCTION {FUNCTION}(text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_to_tsvector(array_remove(regexp_split_to_array(
        regexp_replace($1, '([[:alnum:]]{{255}})[[:alnum:]]+', '\1', 'g'), '[^[:alnum:]]+'), ''))
$$"""


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(CREATE_FUNCTION)
    schema_editor.execute(
        f"ALTER TABLE inbox_item ADD COLUMN IF NOT EXISTS {COLUMN} tsvector"
        f" GENERATED ALWAYS AS ({FUNCTION}(search_text)) STORED"
    )
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON inbox_item USING gin ({COLUMN})")


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")
    schema_editor.execute(f"ALTER TABLE inbox_item DROP COLUMN IF EXISTS {COLUMN}")
    schema_editor.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}(text)")


class Migration(migrations.Migration):
    dependencies = [("inbox", "0012_item_search_text_headings")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
