"""``interrupt_answer_sync``: the session service's answer from sync code, given the session or its id."""

from __future__ import annotations

import pytest

from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.services import interrupt_answer_sync


def test_the_sync_form_takes_a_session_id(start_review, on_commit):
    session, item = start_review()
    with on_commit():
        answers = {item.interrupt_id: {"result": "approve"}}
        [answered] = interrupt_answer_sync(session.pk, answers, decided_by="agui:test")
    assert answered.id == item.interrupt_id
    item.refresh_from_db()
    assert item.status == "resolved"


def test_the_sync_form_refuses_an_unknown_session_id(db):
    with pytest.raises(WorkflowSession.DoesNotExist):
        interrupt_answer_sync("0" * 32, {None: "approve"}, decided_by="agui:test")
