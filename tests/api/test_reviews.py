"""``/api/v1/reviews``: ask (each check), read, cancel, revise; decided in the inbox and through the API."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.api.conftest import auth, post

ASK = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", "payload": {"amount": 250}}
TRIAGE = {
    "type": "object",
    "properties": {"severity": {"type": "string", "enum": ["low", "high"]}, "note": {"type": "string"}},
    "required": ["severity"],
}


@pytest.fixture
def ask(client, token, on_commit):
    """POST a review (``ASK`` updated with ``changes``) and run its session to the question."""

    def go(key=None, token=token, **changes):
        with on_commit():
            return post(client, "/api/v1/reviews", {**ASK, **changes}, token, key)

    return go


def item_of(body):
    return Item.objects.select_related("session", "queue").get(session_id=body["session_id"], status="pending")


def test_a_review_is_asked_in_its_queue_and_read_back(client, token, ask):
    response = ask("ask-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["id"].startswith("rv_")
    assert (body["status"], body["kind"], body["queue"], body["decision"]) == ("pending", "confirm", "finance", None)
    assert body["url"] == f"http://testserver/api/v1/reviews/{body['id']}"
    item = item_of(body)
    assert (item.queue.slug, item.interrupt_id, item.message, item.payload) == (
        "finance",
        body["id"],
        ASK["message"],
        ASK["payload"],
    )
    assert item.metadata["kind"] == "review_confirm"
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["inbox_url"] == f"http://testserver/inbox/items/{item.pk}/"
    assert read["status"] == "pending"
    assert AuditEntry.objects.filter(action="review.ask", actor="client:partner").exists()


def test_a_reviewer_decides_and_the_answer_is_the_sessions_output(client, token, ask, manager, on_commit):
    body = ask().json()
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="reject", reason="Too much")
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["status"] == "decided"
    decision = read["decision"]
    assert (decision["action"], decision["reason"], decision["by"], decision["answer"]) == (
        "reject",
        "Too much",
        "manager",
        None,
    )
    assert decision["at"]
    session = WorkflowSession.objects.get(pk=body["session_id"])
    assert (session.status, session.output) == ("completed", "reject")
