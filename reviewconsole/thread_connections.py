"""Database connections of the console's long-lived threads (task workers, the group sender).

Django opens a connection per thread and, with ``CONN_MAX_AGE = 0`` (the embedded SQLite
default), closes it at the end of each request: ``close_old_connections``. A long-lived thread
calls :func:`recycle_connections` before each turn instead (a task, a live message), as a request
would, with one exception: a healthy SQLite connection is kept for the thread's life. Opening one
costs about 0.8 ms (``sqlite3.connect``, the ``init_command`` pragmas and the functions Django
registers on each), and a session's run, its relay and its live message each opened one: keeping
them took a webhook's p50 to the reviewer's socket from 33.8 to 26.5 ms (``bench/README.md``,
issue 13). A SQLite
connection holds no server resource and, outside a transaction, no lock.

PostgreSQL connections are left to Django's rules (``CONN_MAX_AGE``, ``CONN_HEALTH_CHECKS``) and to
the pool (``settings/env.py``), which a thread must not hold on to between turns. Request threads
are not long-lived (Daphne runs each request's sync code on a thread of its own) and keep
Django's rules.
"""

from __future__ import annotations

from django.db import connections

__all__ = ["close_thread_connections", "recycle_connections"]


def recycle_connections() -> None:
    """Before a long-lived thread's next turn: close this thread's connections that are broken
    or past ``CONN_MAX_AGE`` (``close_if_unusable_or_obsolete``), except a healthy SQLite one
    (see the module docstring). Raises what closing a connection raises (``DatabaseError``)."""
    for conn in connections.all(initialized_only=True):
        kept = (
            conn.vendor == "sqlite"
            and conn.connection is not None
            and not conn.errors_occurred
            and not conn.in_atomic_block
            and conn.get_autocommit()
        )
        if not kept:
            conn.close_if_unusable_or_obsolete()


def close_thread_connections() -> None:
    """When a long-lived thread stops: close its connections, SQLite's too."""
    for conn in connections.all(initialized_only=True):
        conn.close()
