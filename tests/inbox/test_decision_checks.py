"""A workflow's checks before a decision (``WorkflowSpec.before_decision``) in the inbox and its
bulk approval: a refusal is 400 ``decision_refused`` with the workflow's message (escaped on the
page), audited as ``interrupt.decide_refused``, and nothing is stored."""

from __future__ import annotations

import dataclasses

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import DecisionRefusedError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from reviewconsole.workflows import registry

BIG = {"order_id": "R-9", "amount": 750, "reason": "Broken"}


def with_checks(monkeypatch, workflow, *checks):
    """Register ``workflow`` again with ``checks`` as its ``before_decision``."""
    specs = registry.current().specs
    monkeypatch.setitem(specs, workflow, dataclasses.replace(specs[workflow], before_decision=checks))


def refusals(item):
    return list(AuditEntry.objects.filter(action="interrupt.decide_refused", target_id=str(item.pk)))


def nothing_stored(item):
    item.refresh_from_db()
    assert item.status == "pending" and item.decision == ""
    assert not Answer.objects.filter(session_id=item.session_id).exists()
    assert not AuditEntry.objects.filter(action="interrupt.decide", target_id=str(item.pk)).exists()


def test_approving_a_refund_above_500_without_a_reason_is_refused_on_the_page(client, personas, start_session):
    _, [item] = start_session("refund-approval", BIG)
    client.force_login(personas.admin)
    response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve", "reason": "  "})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Approving a refund above $500 needs a reason" in page
    nothing_stored(item)
    [entry] = refusals(item)
    assert entry.actor == f"user:{personas.admin.username}"
    assert entry.detail["decision"] == "approve" and entry.detail["door"] == "inbox"
    assert "needs a reason" in entry.detail["message"]


def test_the_same_approval_with_a_reason_is_accepted_and_keeps_the_reason(client, personas, start_session, on_commit):
    _, [item] = start_session("refund-approval", BIG)
    client.force_login(personas.admin)
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve", "reason": "Loyal customer"})
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.decision, item.reason) == ("approve", "Loyal customer")
    assert not refusals(item)


@pytest.mark.parametrize(("amount", "action"), [(250, "approve"), (750, "reject"), (500, "approve")])
def test_the_check_leaves_small_refunds_and_rejections_alone(personas, start_session, on_commit, amount, action):
    _, [item] = start_session("refund-approval", {**BIG, "amount": amount})
    reason = "Not covered" if action == "reject" else ""
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.admin, action=action, reason=reason)
    item.refresh_from_db()
    assert item.decision == action and not refusals(item)


def test_the_refusal_is_escaped_on_the_page_and_plain_in_json(client, personas, start_session, monkeypatch):
    with_checks(monkeypatch, "vip-discount", lambda attempt: "<script>alert(1)</script> not today")
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    page = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; not today" in page and "<script>alert(1)" not in page
    response = client.post(
        f"/inbox/items/{item.pk}/decide/", {"action": "approve"}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["message"], error["interrupt_id"], error["decision"]) == (
        "decision_refused",
        "<script>alert(1)</script> not today",
        item.interrupt_id,
        "approve",
    )
    nothing_stored(item)
    assert len(refusals(item)) == 2


def test_a_check_sees_the_decision_and_the_call_and_may_accept(personas, start_session, monkeypatch, on_commit):
    seen = []
    with_checks(monkeypatch, "vip-discount", lambda attempt: seen.append(attempt))
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.admin, action="reject", reason="too generous")
    [attempt] = seen
    assert (attempt.workflow, attempt.interrupt_id, attempt.decision, attempt.reason) == (
        "vip-discount",
        item.interrupt_id,
        "reject",
        "too generous",
    )
    assert (attempt.door, attempt.decided_by, attempt.request_kind) == (
        "inbox",
        personas.admin.username,
        "vip_discount",
    )
    assert attempt.response == {"result": "reject"}
    item.refresh_from_db()
    assert item.decision == "reject"


def test_a_check_that_raises_refuses_with_a_generic_message(personas, start_session, monkeypatch):
    def broken(attempt):
        raise RuntimeError("secret internals")

    with_checks(monkeypatch, "vip-discount", broken)
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    with pytest.raises(DecisionRefusedError) as caught:
        interrupt_decide(interrupt=item, user=personas.admin, action="approve")
    assert "secret" not in caught.value.message and "could not judge" in caught.value.message
    nothing_stored(item)


def test_bulk_approval_runs_the_checks_for_each_item(client, personas, start_session, monkeypatch, on_commit):
    _, [kept] = start_session("vip-discount", {"customer_id": "c123"})
    _, [refused] = start_session("vip-discount", {"customer_id": "c123"})
    with_checks(monkeypatch, "vip-discount", lambda a: "Not this one." if a.session_id == refused.session_id else None)
    client.force_login(personas.admin)
    with on_commit():
        response = client.post("/inbox/bulk/", {"action": "approve", "ids": [kept.pk, refused.pk]}, follow=True)
    notes = [str(m) for m in response.context["messages"]]
    assert any(n.startswith("Approved 1 item: “") for n in notes), notes
    assert any("Not this one." in n for n in notes)
    assert Item.objects.get(pk=kept.pk).decision == "approve"
    nothing_stored(refused)
    [entry] = refusals(refused)
    assert entry.detail["door"] == "bulk"
