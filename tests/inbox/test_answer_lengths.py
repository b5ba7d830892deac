"""Feedback, reject reasons and edited drafts have a maximum length in every door (issue 13):
400 ``answer_too_long``, nothing stored, so the drafting model never receives more."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.items.actions import MAX_LENGTHS
from reviewconsole.inbox.models import Item
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
    assert answer.json()["error"]["code"] == "answer_too_long" and answer.json()["error"]["field"] == field
    assert answer.json()["error"]["max_length"] == MAX_LENGTHS[field]
    assert Item.objects.get(pk=item.pk).status == "pending" and not session.answers.exists()


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
    assert not session.answers.exists()


def test_the_api_refuses_a_long_rejection_reason_of_a_long_running_tool(client, start_session):
    session, _ = start_session("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "broken"})
    _, token = make_api_client()
    payload = {"status": "rejected", "reason": "x" * (MAX_LENGTHS["reason"] + 1)}
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_too_long"


@pytest.mark.parametrize(
    ("fields", "stored"),
    [
        ({"action": "revise", "feedback": "x\r\n" * 2_000}, ("revise", "x\n" * 1_999 + "x")),
        ({"action": "approve", "edit_draft": "1", "draft": "y\r\n" * 7_000}, ("approve", None)),
    ],
)
def test_the_inbox_counts_a_crlf_line_break_once(client, personas, review, fields, stored, on_commit):
    """Browsers send ``\\r\\n``: 6,000 / 21,000 raw characters are 4,000 / 14,000 once normalised."""
    _, item = review
    client.force_login(personas.admin)
    with on_commit():
        answer = client.post(f"/inbox/items/{item.pk}/decide/", fields, headers={"Accept": "application/json"})
    assert answer.status_code == 200, answer.content
    row = Item.objects.get(pk=item.pk)
    assert row.decision == stored[0]
    assert row.response == (stored[1] if stored[1] is not None else {"result": "approve", "draft": "y\n" * 6_999 + "y"})


def test_the_api_checks_every_text_of_a_result(client, review):
    """Text in ``result`` is held to the feedback maximum even beside another key (which is refused)."""
    session, _ = review
    _, token = make_api_client()
    for payload in ({"result": "shorter " * 20_000, "x": 1}, {"result": "shorter " * 20_000}):
        response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
        assert response.status_code == 400 and response.json()["error"]["code"] in ("answer_invalid", "answer_too_long")
    assert not session.answers.exists()


@pytest.mark.parametrize(
    "payload",
    [{"confirmed": True, "payload": {"note": "x" * (MAX_LENGTHS["answer"] + 1)}}],
)
def test_the_api_bounds_all_the_text_of_a_tool_confirmation(client, start_session, on_commit, payload):
    session, _ = start_session("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "broken"})
    _, token = make_api_client()
    with on_commit():
        response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": {"status": "approved"}}, token)
    assert response.status_code == 202
    pending = Item.objects.filter(session=session, status="pending", kind="confirmation")
    body = {"interrupt_id": pending.get().interrupt_id, "payload": payload}
    response = post(client, f"/api/v1/sessions/{session.id}/resume", body, token)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_too_long"
