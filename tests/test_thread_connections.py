"""A long-lived thread's SQLite connection is kept across turns (``reviewconsole/thread_connections.py``):
``close_old_connections`` closed it before every task and live message (``CONN_MAX_AGE = 0``), and
opening it again cost about 0.8 ms each time, on the way from a webhook to the reviewer's socket."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from reviewconsole.thread_connections import close_thread_connections, recycle_connections

pytestmark = pytest.mark.django_db(transaction=True)


def _in_a_thread(body: Callable[[], Any]) -> Any:
    """``body()`` on a thread of its own (its own connections, as a worker's); its result or its error."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = body()
        except BaseException as exc:  # handed to the test
            out["error"] = exc
        finally:
            close_thread_connections()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_healthy_sqlite_connection_is_kept_across_turns():
    assert connection.vendor == "sqlite"
    assert not connection.settings_dict["CONN_MAX_AGE"]  # Django's rule would close it

    def turns():
        connection.ensure_connection()
        first = connection.connection
        recycle_connections()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        recycle_connections()
        return first, connection.connection

    first, after = _in_a_thread(turns)
    assert first is not None
    assert after is first


def test_a_connection_that_had_an_error_is_closed():
    def turns():
        connection.ensure_connection()
        connection.errors_occurred = True
        recycle_connections()
        return connection.connection

    assert _in_a_thread(turns) is None


def test_a_connection_left_in_a_transaction_is_closed():
    def turns():
        connection.ensure_connection()
        connection.set_autocommit(False)  # a turn that did not restore autocommit
        recycle_connections()
        return connection.connection

    assert _in_a_thread(turns) is None


def test_a_stopping_thread_closes_its_sqlite_connection():
    def turns():
        connection.ensure_connection()
        close_thread_connections()
        return connection.connection

    assert _in_a_thread(turns) is None
