"""An answer sent again through ``POST /api/v1/sessions/{id}/resume`` (``api.services``,
``receipts.is_repeat``): the identical answer gets 200 with the first receipt; one that differs in
its reason, edited draft or form answer is refused 409 ``interrupt_decided`` naming who decided
what, never answered 200 as if it were the same decision."""

from __future__ import annotations

import pytest

from reviewconsole.workflow_sessions.models import Answer, Interrupt
from tests.api.conftest import auth, post

ASK = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", "payload": {"amount": 250}}
TRIAGE = {
    "type": "object",
    "properties": {"severity": {"type": "string", "enum": ["low", "high"]}},
    "required": ["severity"],
}
DRAFT = {"kind": "draft", "payload": {"draft": "Hello,\nyour refund is on its way.\n"}}

CASES = {
    "a yes/no rejection's reason": (
        {},
        {"result": "reject", "reason": "Not refundable"},
        {"result": "reject", "reason": "Paid by card"},
    ),
    "a free-text rejection's reason": (
        {"kind": "text"},
        {"result": "reject", "reason": "Not refundable"},
        {"result": "reject", "reason": "Paid by card"},
    ),
    "an edited draft": (
        DRAFT,
        {"result": "approve", "draft": "Hello,\nyour refund is sent."},
        {"result": "approve", "draft": "Hello,\nyour refund was sent."},
    ),
    "a form's answer": (
        {"response_schema": TRIAGE},
        {"severity": "high"},
        {"severity": "low"},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_same_answer_again_is_its_receipt_and_another_is_refused(client, token, on_commit, case):
    changes, answer, other = CASES[case]
    with on_commit():
        review = post(client, "/api/v1/reviews", {**ASK, **changes}, token).json()
    resume = f"/api/v1/sessions/{review['session_id']}/resume"
    with on_commit():
        first = post(client, resume, {"interrupt_id": review["id"], "payload": answer}, token)
    assert first.status_code == 202, first.content
    receipt = first.json()["receipt"]
    stored = Interrupt.objects.get(session_id=review["session_id"], interrupt_id=review["id"])

    with on_commit():
        again = post(client, resume, {"interrupt_id": review["id"], "payload": answer}, token)
    assert again.status_code == 200, again.content
    assert (again.json()["status"], again.json()["receipt"]) == ("already_decided", receipt)

    refused = post(client, resume, {"interrupt_id": review["id"], "payload": other}, token)
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert (error["code"], error["decided_by"], error["decision"]) == (
        "interrupt_decided",
        "client:partner",
        receipt["decision"],
    )
    assert "client:partner" in error["message"]
    after = Interrupt.objects.get(pk=stored.pk)
    assert (after.response, after.reason) == (stored.response, stored.reason)
    assert Answer.objects.filter(session_id=review["session_id"]).count() == 1
    read = client.get(f"/api/v1/reviews/{review['id']}", headers=auth(token)).json()
    assert read["decision"]["by"] == "client:partner"
