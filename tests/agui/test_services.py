"""Threads and sessions of the AG-UI door: a first request that loses the race for its thread
leaves nothing behind."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body

pytestmark = pytest.mark.django_db(transaction=True)


def sessions():
    """(all sessions, sessions no thread points to)."""
    from reviewconsole.workflow_sessions.models import WorkflowSession

    rows = WorkflowSession.objects.all()
    return rows.count(), rows.filter(agui_thread__isnull=True).count()


async def test_a_first_request_that_loses_its_thread_leaves_no_session(agui, scripted, monkeypatch):
    from reviewconsole.agui import services

    scripted("email-review", ["Draft one."])
    winner = await agui("email-review", body("t-race", "first"))
    assert winner.last["outcome"]["type"] == "interrupt"
    assert await sync_to_async(sessions)() == (1, 0)
    # a request that read "no such thread" before the winner's row was committed
    monkeypatch.setattr(services, "thread_get", lambda **_: None)

    loser = await agui("email-review", body("t-race", "second"))

    assert loser.last["type"] == "RUN_ERROR" and loser.last["code"] == "session_busy"
    assert await sync_to_async(sessions)() == (1, 0)


async def test_concurrent_first_requests_of_one_thread_make_one_session(agui, scripted):
    scripted("email-review", ["Draft one."] * 6)

    runs = await asyncio.gather(*(agui("email-review", body("t-six", f"first {n}")) for n in range(6)))

    assert sum(run.last["type"] == "RUN_FINISHED" for run in runs) >= 1
    assert all(run.last.get("code") in (None, "session_busy", "interrupts_pending") for run in runs)
    assert await sync_to_async(sessions)() == (1, 0)
