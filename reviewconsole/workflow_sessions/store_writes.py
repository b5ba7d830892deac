"""The rows a commit or an answer writes besides the session row and its events, in plain SQL.

Like ``store_sql.py``: these run on every pause and every answer, so they skip the ORM's query
building and model instances (about a tenth of a millisecond per statement, more per instance),
and use one round trip each: a multi-row ``INSERT … RETURNING`` or an ``UPDATE … RETURNING``
(SQLite 3.35+ and PostgreSQL). Values are adapted by the models' own fields
(``get_db_prep_save``), so JSON and datetimes are written exactly as the ORM writes them. Nothing
here commits: callers run it inside their transaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import connection

from engine import InterruptRecord

from .models import Answer, Checkpoint, Interrupt, InterruptStatus
from .store_rows import interrupt_fields
from .store_sql import column, prep

__all__ = [
    "answers_applied",
    "insert_answers",
    "insert_checkpoint",
    "insert_interrupts",
    "interrupt_resolved",
    "interrupts_cancelled",
    "interrupts_pending",
]

_I, _A, _C = Interrupt._meta, Answer._meta, Checkpoint._meta
_PENDING = InterruptStatus.PENDING.value


def _table(meta: Any) -> str:
    return connection.ops.quote_name(meta.db_table)


def _insert(meta: Any, names: Sequence[str], rows: list[list[Any]], *, returning: str | None = None) -> list[Any]:
    """Insert ``rows`` (raw values, adapted here by the fields ``names``) in one statement; the
    ``returning`` column of each row, sorted (ids are assigned in ``VALUES`` order)."""
    marks = "(" + ", ".join(["%s"] * len(names)) + ")"
    params = [prep(meta, name, value) for row in rows for name, value in zip(names, row, strict=True)]
    columns = ", ".join(column(meta, name) for name in names)
    sql = f"INSERT INTO {_table(meta)} ({columns}) VALUES {', '.join([marks] * len(rows))}"  # noqa: S608 (names from the model, values as parameters)
    if returning is not None:
        sql += f" RETURNING {column(meta, returning)}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return sorted(row[0] for row in cursor.fetchall()) if returning is not None else []


_OPENED = (
    "session",
    "interrupt_id",
    "local_id",
    "kind",
    "function_name",
    "node_path",
    "branch",
    "invocation_id",
    "message",
    "payload",
    "response_schema",
    "tool_call",
    "metadata",
    "status",
    "response",
    "decision",
    "reason",
    "decided_by",
    "decided_by_label",
    "decided_at",
    "created_at",
)


def insert_interrupts(session_id: str, records: list[InterruptRecord], now: dt.datetime) -> list[int]:
    """Open ``records`` as pending session interrupts; their row ids, in ``records``' order."""
    rows = []
    for rec in records:
        fields = interrupt_fields(rec)
        rows.append(
            [session_id, *(fields[name] for name in _OPENED[1:13]), _PENDING, None, "", "", None, "", None, now]
        )
    return [int(pk) for pk in _insert(_I, _OPENED, rows, returning="id")]


def interrupts_cancelled(
    session_id: str, wire_ids: list[str], now: dt.datetime, decision: str
) -> list[tuple[int, str]]:
    """Cancel the session's pending interrupts among ``wire_ids``; ``(row id, wire id)`` of those
    changed, by row id. The race this guards: an answer resolving one at the same moment; only
    an UPDATE that still finds it pending changes it."""
    marks = ", ".join(["%s"] * len(wire_ids))
    status, decided_at, key = column(_I, "status"), column(_I, "decided_at"), column(_I, "interrupt_id")
    sql = (
        f"UPDATE {_table(_I)} SET {status} = %s, {decided_at} = %s, {column(_I, 'decision')} = %s "  # noqa: S608 (names from the model, values as parameters)
        f"WHERE {column(_I, 'session')} = %s AND {key} IN ({marks}) AND {status} = %s "
        f"RETURNING {column(_I, 'id')}, {key}"
    )
    params = [InterruptStatus.CANCELLED.value, prep(_I, "decided_at", now), decision, session_id, *wire_ids, _PENDING]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return sorted((int(pk), str(wire)) for pk, wire in cursor.fetchall())


def interrupts_pending(session_id: str) -> list[str]:
    """Wire ids of the session's pending interrupts, oldest first."""
    sql = (
        f"SELECT {column(_I, 'interrupt_id')} FROM {_table(_I)} "  # noqa: S608 (names from the model)
        f"WHERE {column(_I, 'session')} = %s AND {column(_I, 'status')} = %s ORDER BY {column(_I, 'id')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [session_id, _PENDING])
        return [str(row[0]) for row in cursor.fetchall()]


def interrupt_resolved(session_id: str, interrupt_id: str, values: dict[str, Any]) -> int | None:
    """Resolve the session's pending interrupt ``interrupt_id`` with ``values`` (field: value);
    its row id, or None when none is pending.

    The race this guards: two reviewers (or a reviewer and an API client) decide the same
    interrupt at once. Only the UPDATE that still finds it pending changes a row (one statement,
    no read before it)."""
    values = {"status": InterruptStatus.RESOLVED.value, **values}
    sets = ", ".join(f"{column(_I, name)} = %s" for name in values)
    status = column(_I, "status")
    sql = (
        f"UPDATE {_table(_I)} SET {sets} WHERE {column(_I, 'session')} = %s "  # noqa: S608 (names from the model, values as parameters)
        f"AND {column(_I, 'interrupt_id')} = %s AND {status} = %s RETURNING {column(_I, 'id')}"
    )
    params = [prep(_I, name, value) for name, value in values.items()]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, session_id, interrupt_id, _PENDING])
        found = cursor.fetchall()
    return int(found[0][0]) if found else None


def insert_answers(session_id: str, answers: list[tuple[str, Any, bool]], now: dt.datetime) -> None:
    """Store ``answers`` (``(interrupt_id, value, final)``) for a run to apply."""
    names = ("session", "interrupt_id", "value", "final", "created_at", "applied_at")
    _insert(_A, names, [[session_id, wire, value, final, now, None] for wire, value, final in answers])


def answers_applied(session_id: str, ids: list[int], now: dt.datetime) -> None:
    """Mark the session's stored answers ``ids`` applied."""
    marks = ", ".join(["%s"] * len(ids))
    sql = (
        f"UPDATE {_table(_A)} SET {column(_A, 'applied_at')} = %s "  # noqa: S608 (names from the model, values as parameters)
        f"WHERE {column(_A, 'session')} = %s AND {column(_A, 'id')} IN ({marks})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [prep(_A, "applied_at", now), session_id, *ids])


_PENDING_ARRAY = {
    # The wire ids of the session's pending interrupts, oldest first, as a JSON array.
    "postgresql": "(SELECT COALESCE(jsonb_agg({wire} ORDER BY {id}), '[]'::jsonb) FROM {table} "
    "WHERE {session} = %s AND {status} = %s)",
    # SQLite aggregates an ordered subquery in its order (it does not flatten it into an
    # aggregate); ORDER BY inside json_group_array needs 3.44. test_checkpoint_pending pins it.
    "sqlite": "(SELECT json_group_array({wire}) FROM (SELECT {wire} FROM {table} "
    "WHERE {session} = %s AND {status} = %s ORDER BY {id}))",
}


def insert_checkpoint(
    checkpoint_id: str, session_id: str, data: dict[str, Any], event_seq: int, state: dict[str, Any], now: dt.datetime
) -> None:
    """Keep a pause's checkpoint, with the state and the wire ids of the interrupts pending then
    (read by the ``INSERT`` itself, :func:`interrupts_pending`'s list as a JSON array)."""
    names = ("id", "session", "data", "event_seq", "state", "created_at")
    values = [checkpoint_id, session_id, data, event_seq, state, now]
    pending = _PENDING_ARRAY[connection.vendor].format(
        wire=column(_I, "interrupt_id"),
        id=column(_I, "id"),
        table=_table(_I),
        session=column(_I, "session"),
        status=column(_I, "status"),
    )
    columns = ", ".join(column(_C, name) for name in (*names, "pending"))
    sql = f"INSERT INTO {_table(_C)} ({columns}) VALUES ({', '.join(['%s'] * len(names))}, {pending})"  # noqa: S608 (names from the models, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*(prep(_C, n, v) for n, v in zip(names, values, strict=True)), session_id, _PENDING])
