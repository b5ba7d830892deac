"""A client cancels what it asked (``POST /api/v1/reviews/{id}/cancel``, ``POST
/api/v1/sessions/{id}/cancel``): the waiting inbox item says it was cancelled by ``client:<name>``
with the client's reason, and a decision sent then is refused 409 ``cancelled`` (the page, its
JSON) / ``interrupt_cancelled`` (the API) saying the client cancelled it, not a generic conflict."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from tests.api.conftest import post
from tests.conftest import COMPLAINT

ASK = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", "payload": {"amount": 250}}
JSON = {"Accept": "application/json"}


def _review(client, token, on_commit, reason):
    with on_commit():
        review = post(client, "/api/v1/reviews", ASK, token).json()
    item = Item.objects.get(session_id=review["session_id"], status="pending")
    with on_commit():
        cancelled = post(client, f"/api/v1/reviews/{review['id']}/cancel", {"reason": reason}, token)
    assert cancelled.status_code == 200, cancelled.content
    return review["session_id"], item


def _session(client, token, on_commit, reason):
    with on_commit():
        started = post(
            client, "/api/v1/sessions", {"workflow": "email-review", "input": {"complaint": COMPLAINT}}, token
        )
    session_id = started.json()["session_id"]
    item = Item.objects.get(session_id=session_id, status="pending")
    with on_commit():
        cancelled = post(client, f"/api/v1/sessions/{session_id}/cancel", {"reason": reason}, token)
    assert cancelled.status_code == 200, cancelled.content
    return session_id, item


CANCELS = {"a review": _review, "a session": _session}


@pytest.mark.parametrize("cancel", CANCELS)
def test_the_item_says_the_client_cancelled_it_and_a_decision_then_is_409_cancelled(
    client, token, on_commit, manager, cancel
):
    session_id, item = CANCELS[cancel](client, token, on_commit, "Not needed any more")
    item.refresh_from_db()
    assert (item.status, item.display_status) == ("cancelled", "cancelled")
    assert (item.decision, item.decided_by_label, item.reason) == ("cancelled", "client:partner", "Not needed any more")

    client.force_login(manager)
    refused = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}, headers=JSON)
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert (error["code"], error["cancelled_by"], error["reason"]) == (
        "cancelled",
        "client:partner",
        "Not needed any more",
    )
    assert error["message"].startswith("This request was cancelled by its client (client:partner) at ")
    assert error["message"].endswith(": Not needed any more; nothing was recorded.")

    page = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    assert page.status_code == 409
    assert page.context["conflict"] == error["message"]
    assert Answer.objects.filter(session_id=session_id).count() == 0


def test_the_api_answering_a_review_its_client_cancelled_is_409_interrupt_cancelled(client, token, on_commit):
    with on_commit():
        review = post(client, "/api/v1/reviews", ASK, token).json()
    with on_commit():
        post(client, f"/api/v1/reviews/{review['id']}/cancel", {"reason": "Asked twice"}, token)
    refused = post(
        client,
        f"/api/v1/sessions/{review['session_id']}/resume",
        {"interrupt_id": review["id"], "payload": "yes"},
        token,
    )
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert (error["code"], error["cancelled_by"], error["reason"]) == (
        "interrupt_cancelled",
        "client:partner",
        "Asked twice",
    )
    assert "cancelled by its client (client:partner)" in error["message"]


def test_a_cancel_without_a_reason_still_names_the_client(client, token, on_commit, manager):
    _, item = _review(client, token, on_commit, "")
    client.force_login(manager)
    error = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "reject"}, headers=JSON).json()["error"]
    assert (error["code"], error["cancelled_by"], error["reason"]) == ("cancelled", "client:partner", None)
    assert error["message"].endswith("; nothing was recorded.")


def test_before_the_item_hears_of_the_cancel_a_decision_is_still_409_cancelled(client, token, on_commit, manager):
    with on_commit():
        review = post(client, "/api/v1/reviews", ASK, token).json()
    item = Item.objects.get(session_id=review["session_id"], status="pending")
    # Outside on_commit the cancel's relay to the item never runs: the item stays pending, its
    # session's interrupt cancelled, with who cancelled it said on the item by the door.
    post(client, f"/api/v1/reviews/{review['id']}/cancel", {"reason": "Asked twice"}, token)
    item.refresh_from_db()
    assert (item.status, item.decided_by_label) == ("pending", "client:partner")
    client.force_login(manager)
    error = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}, headers=JSON).json()["error"]
    assert (error["code"], error["cancelled_by"], error["reason"]) == ("cancelled", "client:partner", "Asked twice")


@pytest.mark.parametrize("cancel", CANCELS)
@pytest.mark.parametrize(
    ("reason", "result"),
    [("Asked twice", "Cancelled by client:partner: Asked twice"), ("", "Cancelled by client:partner.")],
)
def test_the_cancelled_session_s_result_names_who_cancelled_it_and_why(
    client, token, on_commit, cancel, reason, result
):
    """One wording whichever door cancelled (the inbox's: ``Cancelled by <manager>: <reason>``)."""
    session_id, _ = CANCELS[cancel](client, token, on_commit, reason)
    session = client.get(f"/api/v1/sessions/{session_id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert (session["status"], session["result"]) == ("cancelled", result)


def test_a_manager_s_cancel_of_the_session_reads_the_same_way(client, on_commit, manager, start_review):
    _, item = start_review()
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/cancel/", {"scope": "session", "reason": "Duplicate ticket"})
    result = client.get(f"/inbox/items/{item.pk}/status.json").json()["session"]["result"]
    assert result == "Cancelled by manager: Duplicate ticket"


def test_a_cancel_sent_without_a_body_says_to_send_a_json_object(client, token, on_commit):
    with on_commit():
        started = post(
            client, "/api/v1/sessions", {"workflow": "email-review", "input": {"complaint": COMPLAINT}}, token
        )
    session_id = started.json()["session_id"]
    response = client.generic(
        "POST",
        f"/api/v1/sessions/{session_id}/cancel",
        b"",
        content_type="",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (
        "invalid_request",
        "The request has no JSON body: send a JSON object (`{}` when every field is left out).",
    )
