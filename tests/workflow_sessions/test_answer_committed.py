"""``interrupt_answer(committed=…)``: the door's callback runs once the answer commits, before the
outbox relay tells the consumers (AG-UI queues the run there), and never for a refused answer."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from engine import UnknownInterruptError
from reviewconsole.workflow_sessions import outbox
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.services import interrupt_answer, interrupt_answer_sync


@pytest.fixture
def heard():
    """What happened, in order: ``"committed"`` and the name of each event a consumer heard."""
    order: list[str] = []
    outbox.register_consumer("test-order", lambda event, outbox_id: order.append(type(event).__name__), order=5)
    yield order
    outbox.unregister_consumer("test-order")


def test_committed_runs_after_the_answer_commits_and_before_the_relay(start_review, on_commit, heard):
    session, item = start_review()
    heard.clear()  # what the start relayed
    with on_commit():
        async_to_sync(interrupt_answer)(
            session,
            {item.interrupt_id: {"result": "approve"}},
            decided_by="agui:test",
            committed=lambda: heard.append("committed"),
        )
        assert heard == []  # not before the commit
    assert heard[0] == "committed" and "InterruptAnswered" in heard[1:]
    item.refresh_from_db()
    assert item.status == "resolved"


def test_committed_is_not_called_for_a_refused_answer(start_review, on_commit, heard):
    session, _ = start_review()
    heard.clear()
    with on_commit(), pytest.raises(UnknownInterruptError):
        async_to_sync(interrupt_answer)(
            session, {"no-such-id": "approve"}, decided_by="agui:test", committed=lambda: heard.append("committed")
        )
    assert heard == []


def test_the_sync_form_takes_a_session_id_and_committed_too(start_review, on_commit, heard):
    session, item = start_review()
    heard.clear()
    with on_commit():
        interrupt_answer_sync(
            session.pk,
            {item.interrupt_id: {"result": "approve"}},
            decided_by="agui:test",
            committed=lambda: heard.append("committed"),
        )
        assert heard == []
    assert heard[0] == "committed" and "InterruptAnswered" in heard[1:]


def test_the_sync_form_refuses_an_unknown_session_id(db):
    with pytest.raises(WorkflowSession.DoesNotExist):
        interrupt_answer_sync("0" * 32, {None: "approve"}, decided_by="agui:test", committed=lambda: None)
