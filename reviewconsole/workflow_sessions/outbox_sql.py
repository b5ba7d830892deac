"""The outbox's hot path in plain SQL: writing a commit's rows, and the relay's claim of them.

Every commit that opens, answers or cancels an interrupt writes outbox rows and relays them, so
like ``store_sql.py`` these skip the ORM's query building and use one round trip each: a
multi-row ``INSERT … RETURNING`` and an ``UPDATE … RETURNING`` (SQLite 3.35+ and PostgreSQL).
Values are adapted by the model's own fields (``get_db_prep_save``), so JSON and datetimes are
written exactly as the ORM writes them. Nothing here commits: callers run it in their transaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import connection

from .models import OutboxEvent
from .store_sql import column, prep

__all__ = ["claim_rows", "insert_rows"]

_O = OutboxEvent._meta
_INSERT = ("kind", "session_id", "data", "created_at", "published_at", "attempts", "last_error")


def insert_rows(session_id: str, rows: Sequence[tuple[str, dict[str, Any], bool]], now: dt.datetime) -> list[int]:
    """Insert ``rows`` (``(kind, data, published)``) of ``session_id``; their ids, in ``rows``' order.

    A row written ``published`` gets ``published_at = now`` (no consumer wants it). The ids of one
    multi-row insert are assigned in ``VALUES`` order (as Django's ``bulk_create`` relies on), so
    the returned ids, sorted, are the rows' ids in order.
    """
    table = connection.ops.quote_name(_O.db_table)
    columns = ", ".join(column(_O, name) for name in _INSERT)
    marks = "(" + ", ".join(["%s"] * len(_INSERT)) + ")"
    stamp = prep(_O, "created_at", now)
    params: list[Any] = []
    for kind, data, published in rows:
        params += [kind, session_id, prep(_O, "data", data), stamp, stamp if published else None, 0, ""]
    sql = f"INSERT INTO {table} ({columns}) VALUES {', '.join([marks] * len(rows))} RETURNING {column(_O, 'id')}"  # noqa: S608 (names from the model, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return sorted(int(row[0]) for row in cursor.fetchall())


def claim_rows(session_id: str, ids: Sequence[int], now: dt.datetime) -> set[int]:
    """Set ``published_at`` of the rows ``ids`` of ``session_id`` that are still unpublished, provided
    the session has no unpublished row before the first of them; the ids claimed.

    One conditional ``UPDATE … RETURNING``: an empty answer means the rows are held back (an earlier
    row of the session waits) or another relay has them; a row missing from a non-empty answer was
    published by another relay (the sweep) in the meantime.
    """
    table = connection.ops.quote_name(_O.db_table)
    key, published, session = (column(_O, name) for name in ("id", "published_at", "session_id"))
    marks = ", ".join(["%s"] * len(ids))
    sql = (
        f"UPDATE {table} SET {published} = %s WHERE {key} IN ({marks}) AND {published} IS NULL "  # noqa: S608 (names from the model, values as parameters)
        f"AND NOT EXISTS (SELECT 1 FROM {table} AS earlier WHERE earlier.{session} = %s "
        f"AND earlier.{key} < %s AND earlier.{published} IS NULL) RETURNING {key}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [prep(_O, "published_at", now), *ids, session_id, min(ids)])
        return {int(row[0]) for row in cursor.fetchall()}
