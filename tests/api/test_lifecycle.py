"""The lifecycle in the API: ``/sessions/{id}/interrupts/{interrupt_id}/defer|release|escalate|cancel|comments``."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from reviewconsole.api.models import ApiClient
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.models import Comment, Item, QueueChange
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.api.conftest import auth, make_api_client, post
from tests.conftest import end_message


@pytest.fixture
def item(start_review, personas):
    return start_review()[1]


def _url(item, action):
    return f"/api/v1/sessions/{item.session_id}/interrupts/{item.interrupt_id}/{action}"


def _due(hours=3):
    return (timezone.now() + dt.timedelta(hours=hours)).isoformat()


def test_defer(client, token, item):
    response = post(client, _url(item, "defer"), {"note": "Waiting on the customer", "due_at": _due()}, token)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["interrupt"]["id"] == item.interrupt_id
    assert body["interrupt"]["deferred_until"] is not None
    assert (body["comment"]["kind"], body["comment"]["author"]) == ("defer", "client:partner")
    assert AuditEntry.objects.get(action="interrupt.defer").actor == "client:partner"
    assert QueueChange.objects.filter(item=item, event="interrupt.deferred").exists()


def test_defer_refuses_a_past_time_and_a_naive_body(client, token, item):
    past = post(client, _url(item, "defer"), {"note": "x", "due_at": "2020-01-01T00:00:00Z"}, token)
    assert (past.status_code, past.json()["error"]["code"]) == (400, "invalid")
    extra = post(client, _url(item, "defer"), {"note": "x", "due_at": _due(), "nope": 1}, token)
    assert (extra.status_code, extra.json()["error"]["code"]) == (400, "invalid_request")
    naive = post(client, _url(item, "defer"), {"note": "x", "due_at": "2030-01-01T00:00:00"}, token)
    assert (naive.status_code, naive.json()["error"]["code"]) == (400, "invalid_request")


def test_a_claimed_item_needs_override_claims(client, token, item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    refused = post(client, _url(item, "release"), {"note": "x"}, token)
    assert refused.status_code == 409
    assert (refused.json()["error"]["code"], refused.json()["error"]["claimed_by"]) == (
        "interrupt_claimed",
        "p-reviewer",
    )
    ApiClient.objects.filter(name="partner").update(scopes=["override_claims"])
    released = post(client, _url(item, "release"), {"note": "Over to the team"}, token)
    assert released.status_code == 200 and released.json()["interrupt"]["claimed_by"] is None
    again = post(client, _url(item, "release"), {"note": "x"}, token)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "interrupt_not_claimed")


def test_escalate_to_an_allowed_queue(client, token, item):
    refused = post(client, _url(item, "escalate"), {"note": "x", "queue": "finance"}, token)
    assert (refused.status_code, refused.json()["error"]["allowed"]) == (400, ["support-leads", "triage"])
    moved = post(client, _url(item, "escalate"), {"note": "Legal question", "queue": "triage"}, token)
    assert moved.status_code == 200 and moved.json()["interrupt"]["queue"] == "triage"
    default = post(client, _url(item, "escalate"), {"note": "Up again"}, token)
    assert default.json()["interrupt"]["queue"] == "support-leads"


def test_cancel_records_a_cancelled_answer_the_workflow_routes_on(client, token, item, on_commit):
    with on_commit():
        response = post(client, _url(item, "cancel"), {"reason": "Order withdrawn"}, token)
    assert response.status_code == 200, response.content
    shown = response.json()["interrupt"]  # the answer says what was done (this session's trial: it said pending)
    assert (shown["status"], shown["decision"], shown["decided_by"]) == ("resolved", "cancelled", "client:partner")
    row = Item.objects.get(pk=item.pk)
    assert (row.decision, row.decided_by_label, row.reason) == ("cancelled", "client:partner", "Order withdrawn")
    session = WorkflowSession.objects.get(pk=item.session_id)
    assert end_message(session) == "Draft cancelled."
    late = post(client, _url(item, "cancel"), {"reason": "again"}, token)
    assert (late.status_code, late.json()["error"]["code"]) == (409, "interrupt_decided")  # as /resume says it
    assert late.json()["error"]["decided_by"] == "client:partner"


def test_cancel_after_a_decision_is_a_409_naming_who(client, token, item, personas, on_commit):
    from reviewconsole.inbox.items.decisions import interrupt_decide

    # The item as the API read it, then a reviewer decides before the cancel lands.
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve")
    Item.objects.filter(pk=item.pk).update(status="pending")  # the API's read raced the relay
    response = post(client, _url(item, "cancel"), {"reason": "x"}, token)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "interrupt_decided"
    assert response.json()["error"]["decided_by"] == "p-reviewer"


def test_cancel_the_whole_session(client, token, item, on_commit):
    with on_commit():
        response = post(client, _url(item, "cancel"), {"reason": "Dup", "whole_session": True}, token)
    assert response.status_code == 200
    assert WorkflowSession.objects.get(pk=item.session_id).status == "cancelled"


def test_comments_added_and_listed(client, token, item):
    added = post(client, _url(item, "comments"), {"text": "<b>hand-off</b>"}, token)
    assert added.status_code == 201 and added.json()["text"] == "<b>hand-off</b>"
    listed = client.get(_url(item, "comments"), headers=auth(token)).json()
    assert [(c["kind"], c["author"]) for c in listed["comments"]] == [("comment", "client:partner")]
    assert Comment.objects.get().author_label == "client:partner"


def test_out_of_scope_sessions_are_404(client, item):
    _, narrow = make_api_client("narrow", workflows=["refund-approval"])
    for action, body in (
        ("defer", {"note": "x", "due_at": _due()}),
        ("cancel", {"reason": "x"}),
        ("comments", {"text": "x"}),
    ):
        response = post(client, _url(item, action), body, narrow)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "session_not_found")
    assert Item.objects.get(pk=item.pk).is_pending


def test_an_idempotent_retry_returns_the_first_answer(client, token, item):
    first = post(client, _url(item, "comments"), {"text": "once"}, token, key="k1")
    second = post(client, _url(item, "comments"), {"text": "once"}, token, key="k1")
    assert second.json() == first.json() and second["Idempotent-Replayed"] == "true"
    assert Comment.objects.count() == 1


def test_a_cancelled_answer_is_refused_through_resume(client, token, item):
    """Outsiders cannot send the console's cancelled answer to skip a schema: cancelling is its own action."""
    response = post(
        client,
        f"/api/v1/sessions/{item.session_id}/resume",
        {"interrupt_id": item.interrupt_id, "payload": {"cancelled": True}},
        token,
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, "answer_invalid")
    assert Item.objects.get(pk=item.pk).is_pending


def test_the_operations_are_in_the_openapi_document(client):
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    base = "/api/v1/sessions/{session_id}/interrupts/{interrupt_id}"
    for action in ("defer", "release", "escalate", "cancel", "comments"):
        assert "post" in paths[f"{base}/{action}"]
    assert "get" in paths[f"{base}/comments"]
