"""The migration ``workflow_sessions.0008_session_fk_indexes_dropped``: events, session interrupts
and answers keep only the indexes that start with their session (a lookup by session uses them),
and going back creates the foreign key's own index again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("workflow_sessions", "0007_correlation_key")]
AFTER = [("workflow_sessions", "0008_session_fk_indexes_dropped")]
TABLES = ("workflow_sessions_event", "workflow_sessions_interrupt", "workflow_sessions_answer")


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def _session_indexes(table: str) -> list[list[str]]:
    """The columns of each index (unique ones included) of ``table`` whose first column is ``session_id``."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return sorted(
        c["columns"] for c in found.values() if (c["index"] or c["unique"]) and c["columns"][:1] == ["session_id"]
    )


@pytest.mark.django_db(transaction=True)
def test_the_foreign_keys_own_index_goes_and_comes_back():
    try:
        _migrate(BEFORE)
        assert all(["session_id"] in _session_indexes(table) for table in TABLES)
        _migrate(AFTER)
        assert _session_indexes("workflow_sessions_event") == [["session_id", "node_path"], ["session_id", "seq"]]
        assert _session_indexes("workflow_sessions_interrupt") == [
            ["session_id", "interrupt_id"],
            ["session_id", "status"],
        ]
        assert _session_indexes("workflow_sessions_answer") == [["session_id", "applied_at"]]
        _migrate(BEFORE)
        assert all(["session_id"] in _session_indexes(table) for table in TABLES)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # back to the latest schema
