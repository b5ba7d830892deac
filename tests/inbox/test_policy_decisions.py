"""Approval policies deciding inbox items (``inbox/items/policy_decisions.py``): the demo refund's
automatic approval, a rule's rejection, standing approvals' uses, each recorded on the item, in the
audit log and the timeline as a person's decision is; counted once; refused afterwards."""

from __future__ import annotations

import json

import pytest
from django.http import QueryDict

from engine import AlreadyDecidedError
from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.timeline import timeline
from reviewconsole.demo import refund_approval
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.outbox_consumer import inbox_consume
from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page
from reviewconsole.inbox.models import Item
from reviewconsole.policies.models import PolicyRule, PolicyVerdict
from reviewconsole.workflow_sessions.models import Answer, OutboxEvent
from reviewconsole.workflow_sessions.outbox import row_event
from tests.api.conftest import make_api_client, post
from tests.conftest import end_message

SMALL = {"order_id": "A-1", "amount": 40, "reason": "late"}


@pytest.fixture
def ledger(monkeypatch):
    submitted: list[dict] = []
    monkeypatch.setattr(refund_approval, "submitted_refunds", submitted)
    return submitted


def _items(session):
    return list(Item.objects.filter(session=session).order_by("id"))


def test_a_small_refund_is_approved_by_the_policy_with_its_reason(start_session):
    session, pending = start_session("refund-approval", SMALL)
    approval, confirmation = _items(session)
    assert (approval.function_name, approval.status, approval.decision) == ("ask_for_approval", "resolved", "approve")
    assert approval.decided_by_label == "policy: small-refunds"
    assert approval.reason == "Refunds up to $100 are approved by policy."
    assert approval.decided_by_id is None
    assert approval.response == {"status": "approved"}
    assert pending == [confirmation], "the run went on to the submission's confirmation"
    verdict = PolicyVerdict.objects.get(session_interrupt=approval.session_interrupt)
    assert (verdict.rule, verdict.outcome, verdict.approvals_required) == ("small-refunds", "approve", 1)


def test_the_automatic_decision_is_audited_and_in_the_timeline_as_a_persons(start_session):
    session, _ = start_session("refund-approval", SMALL)
    approval = _items(session)[0]
    [entry] = AuditEntry.objects.filter(action="interrupt.decide", target_id=str(approval.pk))
    assert entry.actor == "policy:small-refunds"
    assert entry.after == {"decision": "approve", "response": {"status": "approved"}}
    assert entry.detail["policy"] == "small-refunds"
    assert entry.detail["source"] == "workflow"
    assert entry.detail["reason"] == "Refunds up to $100 are approved by policy."
    decided = [d for row in timeline(session) for d in row.decisions]
    assert [(d.decision, d.decided_by, d.reason) for d in decided] == [
        ("approve", "policy: small-refunds", "Refunds up to $100 are approved by policy.")
    ]


def test_a_refund_between_the_limits_waits_for_one_person(start_session, personas, on_commit):
    _, [approval] = start_session("refund-approval", {"order_id": "A-2", "amount": 250, "reason": "broken"})
    assert approval.function_name == "ask_for_approval"
    assert PolicyVerdict.objects.get(session_interrupt=approval.session_interrupt).outcome == "person"
    with on_commit():
        interrupt_decide(interrupt=approval, user=personas.other_reviewer, action="approve")
    approval.refresh_from_db()
    assert (approval.decision, approval.decided_by_label) == ("approve", "p-other")


def test_a_declined_tool_call_never_executes(start_session, ledger):
    PolicyRule.objects.create(
        workflow="refund-approval",
        name="order-under-investigation",
        tool="submit_refund",
        when='args.order_id == "X-1"',
        decide="reject",
        reason="Order X-1 is under investigation.",
    )
    session, pending = start_session("refund-approval", {"order_id": "X-1", "amount": 40, "reason": "late"})
    session.refresh_from_db()
    confirmation = _items(session)[-1]
    assert pending == []
    assert confirmation.function_name == "adk_request_confirmation"
    assert (confirmation.decision, confirmation.decided_by_label) == ("reject", "policy: order-under-investigation")
    assert confirmation.response == {"confirmed": False}
    assert ledger == [], "the tool's body never ran"
    assert session.status == "completed"
    assert end_message(session) == "Your refund for order X-1 was not submitted."
    entry = AuditEntry.objects.get(action="interrupt.decide", target_id=str(confirmation.pk))
    assert entry.detail["source"] == "admin"


def test_an_auto_denied_call_cannot_be_approved_by_a_client(start_session, personas, client, ledger):
    PolicyRule.objects.create(
        workflow="refund-approval", name="deny-all-submissions", tool="submit_refund", decide="reject", reason="Frozen."
    )
    session, _ = start_session("refund-approval", SMALL)
    denied = _items(session)[-1]
    assert denied.decided_by_label == "policy: deny-all-submissions"
    _, token = make_api_client()
    body = {"interrupt_id": denied.interrupt_id, "payload": {"confirmed": True}}
    response = post(client, f"/api/v1/sessions/{session.id}/resume", body, token)
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "interrupt_decided"
    assert error["decided_by"] == "policy: deny-all-submissions"
    with pytest.raises(AlreadyDecidedError, match="policy: deny-all-submissions"):
        interrupt_decide(interrupt=denied, user=personas.other_reviewer, action="approve")
    refused = AuditEntry.objects.filter(action="interrupt.decide_refused").order_by("id")
    assert [(e.actor, e.detail["decided_by"]) for e in refused] == [
        ("client:partner", "policy: deny-all-submissions"),
        ("user:p-other", "policy: deny-all-submissions"),
    ]
    assert refused[0].after["answer"] == {"confirmed": True}
    assert refused[1].after["decision"] == "approve"
    denied.refresh_from_db()
    assert (denied.decision, denied.response) == ("reject", {"confirmed": False})
    assert ledger == []
    assert Answer.objects.filter(session=session, interrupt_id=denied.interrupt_id).count() == 1


def test_a_relay_run_again_decides_nothing_twice(start_session, on_commit):
    session, _ = start_session("refund-approval", SMALL)
    approval = _items(session)[0]
    row = OutboxEvent.objects.get(
        kind="interrupt.opened", session_id=session.id, data__interrupt_pk=approval.session_interrupt_id
    )
    with on_commit():
        inbox_consume(row_event(row.kind, row.data), row.pk)  # as a relay run again after a crash would
    assert Answer.objects.filter(session=session, interrupt_id=approval.interrupt_id).count() == 1
    assert AuditEntry.objects.filter(action="interrupt.decide", target_id=str(approval.pk)).count() == 1
    assert PolicyVerdict.objects.filter(session_interrupt=approval.session_interrupt).count() == 1
    assert Item.objects.filter(session=session, interrupt_id=approval.interrupt_id).count() == 1


def test_the_list_filters_what_a_policy_decided(start_session, personas, on_commit):
    small, _ = start_session("refund-approval", SMALL)
    _, [by_person] = start_session("refund-approval", {"order_id": "A-3", "amount": 300, "reason": "broken"})
    with on_commit():
        interrupt_decide(interrupt=by_person, user=personas.other_reviewer, action="approve")
    auto = _items(small)[0]
    decided = inbox_page(personas.other_reviewer, InboxFilters(status="resolved")).items
    assert {auto.pk, by_person.pk} <= {row.pk for row in decided}
    filtered = InboxFilters.from_query(QueryDict("by_policy=1"))
    assert filtered.status == "resolved"
    assert [row.pk for row in inbox_page(personas.other_reviewer, filtered).items] == [auto.pk]


def test_the_list_page_offers_the_filter(start_session, personas, client):
    small, _ = start_session("refund-approval", SMALL)
    client.force_login(personas.other_reviewer)
    page = client.get("/inbox/?by_policy=1")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="by_policy" value="1" id="f-by-policy" checked' in html
    snapshot = client.get("/inbox/items.json?by_policy=1").json()
    assert [i["id"] for i in snapshot["items"]] == [_items(small)[0].pk]
    assert json.dumps(snapshot).count("policy: small-refunds") >= 1
