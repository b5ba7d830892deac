"""An answer naming no interrupt, sent again once the first one was applied (a double send, or
a retry after a lost reply), is refused ``409 interrupt_decided`` with the ``pending`` ids to name:
it never answers the request the first answer led to, which its sender has not seen (found by a
new user following the README: ``{"payload": "shorter"}`` sent twice gave two revisions)."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from tests.api.conftest import post


@pytest.fixture
def review(start_session):
    session, [item] = start_session("email-review", {"complaint": "The parcel is late."})
    return session, item


def _resume(client, token, session, body, on_commit):
    with on_commit():
        return post(client, f"/api/v1/sessions/{session.id}/resume", body, token)


def test_the_same_unnamed_answer_again_does_not_answer_the_next_draft(client, token, review, on_commit):
    session, first = review
    assert _resume(client, token, session, {"payload": "shorter"}, on_commit).status_code == 202
    [second] = Item.objects.filter(session=session, status="pending")
    assert second.pk != first.pk  # the run applied it: the next draft waits

    again = _resume(client, token, session, {"payload": "shorter"}, on_commit)

    assert again.status_code == 409, again.content
    error = again.json()["error"]
    assert (error["code"], error["interrupt_id"], error["decided_by"], error["pending"]) == (
        "interrupt_decided",
        first.interrupt_id,
        "client:partner",
        [second.interrupt_id],
    )
    assert "name it (interrupt_id)" in error["message"]
    assert Item.objects.get(pk=second.pk).status == "pending"
    assert Answer.objects.filter(session=session).count() == 1


def test_the_same_answer_naming_the_new_request_is_taken(client, token, review, on_commit):
    session, _ = review
    _resume(client, token, session, {"payload": "shorter"}, on_commit)
    [second] = Item.objects.filter(session=session, status="pending")
    named = _resume(client, token, session, {"interrupt_id": second.interrupt_id, "payload": "shorter"}, on_commit)
    assert named.status_code == 202, named.content
    assert Item.objects.get(pk=second.pk).decision == "revise"


def test_another_unnamed_answer_answers_the_pending_request(client, token, review, on_commit):
    session, _ = review
    _resume(client, token, session, {"payload": "shorter"}, on_commit)
    [second] = Item.objects.filter(session=session, status="pending")
    approved = _resume(client, token, session, {"payload": "approve"}, on_commit)
    assert approved.status_code == 202, approved.content
    assert Item.objects.get(pk=second.pk).decision == "approve"
