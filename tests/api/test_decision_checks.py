"""The workflow's checks before a decision in the API's resume: ``400 decision_refused`` with the
workflow's message, audited as ``interrupt.decide_refused`` by the client, nothing stored."""

from __future__ import annotations

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from tests.api.conftest import post

BIG = {"order_id": "R-9", "amount": 750.0, "reason": "Broken on arrival"}


def _resume(client, token, session, payload, on_commit, key=None):
    with on_commit():
        return post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token, key)


def test_an_approval_above_500_without_a_reason_is_refused_and_audited(client, token, start_session, on_commit):
    session, [item] = start_session("refund-approval", BIG)
    response = _resume(client, token, session, {"status": "approved"}, on_commit, key="k-1")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "decision_refused" and "needs a reason" in error["message"]
    assert "Reason field" not in error["message"]  # the page's field means nothing to an API caller
    assert (error["interrupt_id"], error["decision"]) == (item.interrupt_id, "approve")
    assert Item.objects.get(pk=item.pk).status == "pending"
    assert not Answer.objects.filter(session=session).exists()
    assert not AuditEntry.objects.filter(action="interrupt.decide").exists()
    [entry] = AuditEntry.objects.filter(action="interrupt.decide_refused")
    assert (entry.actor, entry.target_id, entry.detail["door"]) == ("client:partner", str(item.pk), "api")
    # A refused write keeps no idempotency record: the same key with a reason is judged afresh.
    again = _resume(client, token, session, {"status": "approved", "reason": "Loyal"}, on_commit, key="k-2")
    assert again.status_code == 202, again.content
    item.refresh_from_db()
    assert (item.decision, item.reason) == ("approve", "Loyal")


def test_a_rejection_and_a_small_approval_pass_the_check(client, token, start_session, on_commit):
    session, [_] = start_session("refund-approval", BIG)
    response = _resume(client, token, session, {"status": "rejected", "reason": "No"}, on_commit)
    assert response.status_code == 202, response.content
    small, [other] = start_session("refund-approval", {**BIG, "amount": 300.0})
    assert _resume(client, token, small, {"status": "approved"}, on_commit).status_code == 202
    assert Item.objects.get(pk=other.pk).decision == "approve"
    assert not AuditEntry.objects.filter(action="interrupt.decide_refused").exists()
