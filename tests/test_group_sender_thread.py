"""The sender thread (``reviewconsole/group_sender.py``) keeps sending when it cannot check its
database connection: a job that needs no database (AG-UI's progress) ran no more once a test
before had left the thread a connection (scale-out suite: ``close_old_connections``, now
``recycle_connections``, raised)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from reviewconsole import group_sender


@pytest.fixture
def bound_loop():
    """A running loop bound as the in-memory layer's, so :func:`group_sender.submit` hands its jobs
    to the sender thread, as with Redis."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    group_sender.bind_loop(loop)
    yield loop
    group_sender.bind_loop(None)
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_a_job_runs_when_the_connection_check_fails(bound_loop, monkeypatch):
    def unreachable():
        raise RuntimeError("the database is unreachable")

    monkeypatch.setattr(group_sender, "recycle_connections", unreachable)
    ran = threading.Event()
    group_sender.submit(ran.set)
    assert ran.wait(30), "the job was dropped"
    assert group_sender.drain()
