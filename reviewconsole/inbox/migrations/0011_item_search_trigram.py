"""The inbox's text search by index on PostgreSQL: a ``pg_trgm`` GIN index on ``search_text``.

The search is a substring match (``search_text LIKE '%words%'``, ``selectors._base``); a trigram
GIN index answers it without reading the table, at a million items as at a thousand. ``pg_trgm``
is a trusted extension (PostgreSQL 13+): the database's owner may create it. On other databases
(SQLite, the embedded default) this migration does nothing: the search scans, which is fine at
their size. The index is not in ``Item.Meta.indexes`` (that would create it on SQLite too).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

INDEX = "interrupt_search_trgm"


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON inbox_item USING gin (search_text gin_trgm_ops)")


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("inbox", "0010_decided_order")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
