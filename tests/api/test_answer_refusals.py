"""Answers the API refuses (issue 13): an empty free-text answer (400 ``answer_missing``), and an
answer for the next interrupt while the previous answer waits to be applied (409
``interrupt_not_ready``, retryable)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from engine import AnswerMissingError
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.runners import runner_for_session
from tests.api.conftest import post


@pytest.fixture
def review(start_session):
    session, [item] = start_session("email-review", {"complaint": "The parcel is late."})
    return session, item


@pytest.mark.parametrize("payload", [None, {"result": None}, "   "])
def test_an_empty_answer_to_a_free_text_interrupt_is_answer_missing(client, token, review, payload):
    session, item = review
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_missing"
    assert Item.objects.get(pk=item.pk).status == "pending" and not session.answers.exists()


def test_the_engine_refuses_none_for_a_free_text_interrupt(review):
    session, _ = review
    with pytest.raises(AnswerMissingError):
        async_to_sync(runner_for_session(session).submit)(session.id, {None: None})
    assert not session.answers.exists()


def test_an_answer_for_the_next_interrupt_before_the_last_is_applied_is_not_ready(client, token, review):
    session, _ = review
    # No on_commit: the first answer is stored, its run not taken yet.
    first = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "shorter"}, token)
    assert first.status_code == 202 and session.answers.filter(applied_at__isnull=True).exists()
    body = {"interrupt_id": "the-next-draft", "payload": "approve"}
    early = post(client, f"/api/v1/sessions/{session.id}/resume", body, token)
    assert early.status_code == 409, early.json()
    assert early.json()["error"]["code"] == "interrupt_not_ready" and early["Retry-After"] == "1"
    # Naming no interrupt, it is an answer to the one just decided: refused as decided, never
    # "retry" (a retry would answer the next draft, which its sender has not seen).
    late = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "approve"}, token)
    assert late.status_code == 409 and late.json()["error"]["code"] == "interrupt_decided"
