"""Feedback, reject reasons and edited drafts have a maximum length in every door (issue 13):
400 ``answer_too_long``, nothing stored, so the drafting model never receives more."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.actions import MAX_LENGTHS
from reviewconsole.inbox.models import Interrupt
from tests.api.conftest import make_api_client, post


@pytest.fixture
def review(start_session):
    session, [item] = start_session("email-review", {"complaint": "The parcel is late."})
    return session, item


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"action": "revise", "feedback": "x" * (MAX_LENGTHS["feedback"] + 1)}, "feedback"),
        ({"action": "reject", "reason": "x" * (MAX_LENGTHS["reason"] + 1)}, "reason"),
        ({"action": "approve", "edit_draft": "1", "draft": "x" * (MAX_LENGTHS["draft"] + 1)}, "draft"),
    ],
)
def test_the_inbox_refuses_text_over_its_maximum(client, personas, review, fields, field):
    session, item = review
    client.force_login(personas.admin)
    answer = client.post(f"/inbox/items/{item.pk}/decide/", fields, headers={"Accept": "application/json"})
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"] == "answer_too_long" and answer.json()["field"] == field
    assert answer.json()["max_length"] == MAX_LENGTHS[field]
    assert Interrupt.objects.get(pk=item.pk).status == "pending" and not session.deliveries.exists()


def test_feedback_at_the_maximum_is_taken(client, personas, review):
    _, item = review
    client.force_login(personas.admin)
    fields = {"action": "revise", "feedback": "x" * MAX_LENGTHS["feedback"]}
    answer = client.post(f"/inbox/items/{item.pk}/decide/", fields, headers={"Accept": "application/json"})
    assert answer.status_code == 200


@pytest.mark.parametrize(
    "payload",
    [
        "x" * (MAX_LENGTHS["feedback"] + 1),
        {"result": "approve", "draft": "x" * (MAX_LENGTHS["draft"] + 1)},
    ],
)
def test_the_api_refuses_text_over_its_maximum(client, review, payload):
    session, _ = review
    _, token = make_api_client()
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_too_long"
    assert not session.deliveries.exists()


def test_the_api_refuses_a_long_rejection_reason_of_a_long_running_tool(client, start_session):
    session, _ = start_session("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "broken"})
    _, token = make_api_client()
    payload = {"status": "rejected", "reason": "x" * (MAX_LENGTHS["reason"] + 1)}
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_too_long"
