"""The hot path of the ORM store in plain SQL: the session row's conditional update and event inserts.

Every node run of every session goes through these two statements, so they skip the ORM's query
building (about a tenth of a millisecond per statement) and use one round trip each: an
``UPDATE … RETURNING`` (SQLite 3.35+ and PostgreSQL) and one multi-row ``INSERT``. Values are
adapted by the models' own fields (``get_db_prep_save``), so JSON and datetimes are written
exactly as the ORM writes them. Nothing here commits: callers run it inside their transaction.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from django.db import connection

import engine
from engine import Commit, ConcurrencyError, SessionNotFoundError

from .event_rows import stored_data
from .models import Answer, Event, Interrupt, SharedState, WorkflowSession

__all__ = ["SessionUpdate", "column", "insert_events", "prep", "update_session"]

_S = WorkflowSession._meta
_E = Event._meta


@functools.cache
def column(meta: Any, name: str) -> str:
    """The quoted column of field ``name`` of the model ``meta``, looked up once per process (a
    process has one database backend; SQLite and PostgreSQL quote names alike)."""
    return connection.ops.quote_name(meta.get_field(name).column)


def prep(meta: Any, name: str, value: Any) -> Any:
    """``value`` adapted for the database by the field ``name`` of the model ``meta``."""
    return meta.get_field(name).get_db_prep_save(value, connection)


class SessionUpdate:
    """What the conditional update returned: the newest event seq and the columns a record needs."""

    __slots__ = (
        "checkpoint_id",
        "invocation_id",
        "last_seq",
        "metadata",
        "output",
        "title",
        "user_id",
        "workflow",
        "workflow_version",
    )

    def __init__(self, row: tuple[Any, ...]) -> None:
        self.last_seq, self.workflow, self.user_id, self.workflow_version, self.invocation_id, self.title = row[:6]
        self.checkpoint_id: str = row[6]
        self.output = _from_db(_S, "output", row[7])
        self.metadata = _from_db(_S, "metadata", row[8]) or {}


_RETURNING = (
    "last_seq",
    "workflow",
    "user_id",
    "workflow_version",
    "invocation_id",
    "title",
    "checkpoint_id",
    "output",
    "metadata",
)


def _from_db(meta: Any, name: str, value: Any) -> Any:
    field = meta.get_field(name)
    return field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value


def update_session(
    session_id: str,
    commit: Commit,
    *,
    state: dict[str, Any],
    now: dt.datetime,
    checkpoint_id: str | None,
    events: int,
) -> SessionUpdate:
    """Write a commit's session-row part with one conditional ``UPDATE``.

    The race this guards: two runs of one session, or a run and a writer that moved the session
    on. Only an UPDATE that finds the version the run expects (and, for a run, its own lease)
    changes the row; ``version`` and ``last_seq`` move on atomically.

    Raises:
        ConcurrencyError: the version moved on or the lease is someone else's.
        SessionNotFoundError: no such session.
    """
    version, last_seq = column(_S, "version"), column(_S, "last_seq")
    values: dict[str, Any] = {
        "status": commit.status,
        "state": prep(_S, "state", state),
        "checkpoint": prep(_S, "checkpoint", commit.checkpoint),
        "error": prep(_S, "error", commit.error),
        "updated_at": prep(_S, "updated_at", now),
    }
    if commit.invocation_id:
        values["invocation_id"] = commit.invocation_id
    if commit.output is not None:
        values["output"] = prep(_S, "output", commit.output)
    if checkpoint_id is not None:
        values["checkpoint_id"] = checkpoint_id
    if commit.lease_owner is not None and commit.lease_ttl:
        values["lease_expires"] = prep(_S, "lease_expires", now + dt.timedelta(seconds=commit.lease_ttl))
    sets = [f"{version} = {version} + 1", f"{last_seq} = {last_seq} + %s"]
    sets += [f"{column(_S, name)} = %s" for name in values]
    params: list[Any] = [events, *values.values(), session_id, commit.expected_version]
    where = [f"{column(_S, 'id')} = %s", f"{version} = %s"]
    if commit.lease_owner is not None:
        where.append(f"{column(_S, 'lease_owner')} = %s")
        params.append(commit.lease_owner)
    returning = ", ".join(column(_S, name) for name in _RETURNING)
    table = connection.ops.quote_name(_S.db_table)
    sql = f"UPDATE {table} SET {', '.join(sets)} WHERE {' AND '.join(where)} RETURNING {returning}"  # noqa: S608 (names from the model, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        _refuse(session_id, commit)
    return SessionUpdate(row)


def _refuse(session_id: str, commit: Commit) -> None:
    found = WorkflowSession.objects.filter(pk=session_id).values_list("version", "lease_owner").first()
    if found is None:
        raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
    version, owner = found
    if version != commit.expected_version:
        raise ConcurrencyError(
            f"Session {session_id} is at version {version}, not {commit.expected_version}.", session_id=session_id
        )
    holder = owner or "nobody"
    raise ConcurrencyError(f"Session {session_id}: the run lost its lease (held by {holder}).", session_id=session_id)


def insert_events(session_id: str, events: list[engine.Event], last_seq: int) -> None:
    """Insert ``events`` as the session's events ``last_seq - len(events) + 1 … last_seq``, in one statement."""
    if not events:
        return
    names = ("session", "seq", "event_id", "invocation_id", "author", "node_path", "branch", "timestamp", "data")
    columns = ", ".join(column(_E, name) for name in names)
    row_marks = "(" + ", ".join(["%s"] * len(names)) + ")"
    params: list[Any] = []
    seq = last_seq - len(events)
    for event in events:
        seq += 1
        params += [
            session_id,
            seq,
            event.id,
            event.invocation_id,
            event.author,
            event.node_info.path,
            event.branch or "",
            event.timestamp,
            prep(_E, "data", stored_data(event)),
        ]
    table = connection.ops.quote_name(_E.db_table)
    sql = f"INSERT INTO {table} ({columns}) VALUES {', '.join([row_marks] * len(events))}"  # noqa: S608 (names from the model, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


_RECORD = (
    "id",
    "workflow",
    "user_id",
    "state",
    "status",
    "checkpoint",
    "checkpoint_id",
    "version",
    "workflow_version",
    "invocation_id",
    "output",
    "error",
    "metadata",
)
_JSON = {"state", "checkpoint", "output", "error", "metadata"}


def take_lease(session_id: str, owner: str, ttl: float, now: dt.datetime) -> dict[str, Any] | None:
    """Take the lease (free, expired, or already ours) and return the session's columns, in one
    ``UPDATE … RETURNING``; None when another owner holds a live lease (or there is no session)."""
    table = connection.ops.quote_name(_S.db_table)
    owner_col, expires_col = column(_S, "lease_owner"), column(_S, "lease_expires")
    returning = ", ".join(column(_S, name) for name in _RECORD)
    sql = (
        f"UPDATE {table} SET {owner_col} = %s, {expires_col} = %s WHERE {column(_S, 'id')} = %s "  # noqa: S608 (names from the model, values as parameters)
        f"AND ({owner_col} = '' OR {owner_col} = %s OR {expires_col} < %s) RETURNING {returning}"
    )
    expires = prep(_S, "lease_expires", now + dt.timedelta(seconds=ttl))
    with connection.cursor() as cursor:
        cursor.execute(sql, [owner, expires, session_id, owner, prep(_S, "lease_expires", now)])
        row = cursor.fetchone()
    if row is None:
        return None
    return {
        name: _from_db(_S, name, value) if name in _JSON else value for name, value in zip(_RECORD, row, strict=True)
    }


def append_seq(session_id: str, count: int, now: dt.datetime) -> int:
    """Reserve ``count`` event seqs: bump ``last_seq`` (locking the row) and return the new last one.

    Raises:
        SessionNotFoundError: no such session.
    """
    table = connection.ops.quote_name(_S.db_table)
    last_seq = column(_S, "last_seq")
    updated_at, key = column(_S, "updated_at"), column(_S, "id")
    sql = f"UPDATE {table} SET {last_seq} = {last_seq} + %s, {updated_at} = %s WHERE {key} = %s RETURNING {last_seq}"  # noqa: S608 (names from the model, values as parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, [count, prep(_S, "updated_at", now), session_id])
        row = cursor.fetchone()
    if row is None:
        raise SessionNotFoundError(f"No session {session_id!r}.", session_id=session_id)
    return int(row[0])


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def pending_interrupts(session_id: str) -> list[Any]:
    """The session's pending interrupt rows, oldest first (``Model.objects.raw``: no query building)."""

    sql = f"SELECT * FROM {_table(Interrupt)} WHERE session_id = %s AND status = 'pending' ORDER BY id"  # noqa: S608 (names from the model)
    return list(Interrupt.objects.raw(sql, [session_id]))


def unapplied_answers(session_id: str) -> list[Any]:
    """The session's stored answer rows no run has applied yet, in order."""

    sql = f"SELECT * FROM {_table(Answer)} WHERE session_id = %s AND applied_at IS NULL ORDER BY id"  # noqa: S608 (names from the model)
    return list(Answer.objects.raw(sql, [session_id]))


def has_unapplied_answers(session_id: str) -> bool:
    """True when some answer for the session waits for a run."""

    sql = f"SELECT 1 FROM {_table(Answer)} WHERE session_id = %s AND applied_at IS NULL LIMIT 1"  # noqa: S608 (names from the model)
    with connection.cursor() as cursor:
        cursor.execute(sql, [session_id])
        return cursor.fetchone() is not None


def shared_state(workflow: str, user_id: str) -> dict[str, Any]:
    """``app:`` then ``user:`` keys of this user's sessions of ``workflow``, merged."""

    sql = f"SELECT * FROM {_table(SharedState)} WHERE workflow = %s AND user_id IN ('', %s) ORDER BY user_id"  # noqa: S608 (names from the model)
    merged: dict[str, Any] = {}
    for row in SharedState.objects.raw(sql, [workflow, user_id]):
        merged.update(row.state)
    return merged


def release_lease(session_id: str, owner: str) -> None:
    """Free the lease if ``owner`` holds it."""
    owner_col, expires_col = column(_S, "lease_owner"), column(_S, "lease_expires")
    sql = (
        f"UPDATE {_table(WorkflowSession)} SET {owner_col} = '', {expires_col} = NULL "  # noqa: S608 (names from the model)
        f"WHERE {column(_S, 'id')} = %s AND {owner_col} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [session_id, owner])


def session_row(session_id: str) -> WorkflowSession | None:
    """The session's row, or None."""
    sql = f"SELECT * FROM {_table(WorkflowSession)} WHERE {column(_S, 'id')} = %s"  # noqa: S608 (names from the model)
    found = list(WorkflowSession.objects.raw(sql, [session_id]))
    return found[0] if found else None
