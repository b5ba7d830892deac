"""Request kinds declare their decisions (issue 17, High): the page offers exactly those and
every inbox door refuses any other with 400 ``action_not_supported``."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.items.actions import REQUEST_KINDS, RequestKind, allowed_actions, register_request_kind
from reviewconsole.inbox.models import Item
from tests.inbox.factories import make_items


def _detail(client, user, item):
    client.force_login(user)
    response = client.get(f"/inbox/items/{item.pk}/")
    assert response.status_code == 200
    return response


def test_a_vip_confirmation_offers_approve_and_decline_only(client, personas, start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    response = _detail(client, personas.admin, item)
    page = response.content.decode()
    assert response.context["actions"] == ["approve", "reject"]
    assert 'name="feedback"' not in page and 'value="revise"' not in page
    assert 'value="approve"' in page and 'value="reject"' in page


def test_feedback_to_a_vip_confirmation_is_refused_and_declines_nothing(client, personas, start_session):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    url = f"/inbox/items/{item.pk}/decide/"
    page = client.post(url, {"action": "revise", "feedback": "make it 25%"})
    assert page.status_code == 400 and "cannot be decided with" in page.content.decode()
    answer = client.post(url, {"action": "revise", "feedback": "make it 25%"}, headers={"Accept": "application/json"})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "action_not_supported" and error["actions"] == ["approve", "reject"]
    item.refresh_from_db()
    session.refresh_from_db()
    assert item.status == "pending" and item.decision == "" and not session.answers.exists()


def test_an_unknown_action_is_not_supported_either(client, personas, start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    answer = client.post(
        f"/inbox/items/{item.pk}/decide/", {"action": "explode"}, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "action_not_supported"


def test_a_paused_session_without_metadata_gets_its_kinds_decisions(demo):
    from reviewconsole.inbox.models import Queue

    sales, finance, operations = (Queue.objects.get(slug=s) for s in ("sales", "finance", "operations"))
    [vip] = make_items(sales, 1, workflow="vip-discount", kind="input", metadata={})
    [refund] = make_items(finance, 1, workflow="refund-approval", kind="long_running", metadata={})
    [triage] = make_items(operations, 1, workflow="incident-triage", kind="input", metadata={})
    Item.objects.filter(pk=triage.pk).update(response_schema={"type": "object"})
    [email] = make_items(sales, 1, workflow="email-review", kind="input", metadata={})
    assert allowed_actions(vip) == ["approve", "reject"]
    assert allowed_actions(refund) == ["approve", "reject"]
    assert allowed_actions(Item.objects.get(pk=triage.pk)) == ["answer"]
    assert allowed_actions(email) == ["approve", "reject", "revise"]


def test_every_demo_kind_is_declared_within_what_its_interrupts_carry(client, personas, start_session):
    _, [refund] = start_session("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "broken"})
    _, [triage] = start_session("incident-triage", {"title": "Disk full", "details": "db01"})
    _, [email] = start_session("email-review", {"complaint": "Late parcel"})
    assert allowed_actions(refund) == ["approve", "reject"]
    assert allowed_actions(triage) == ["answer"]
    assert allowed_actions(email) == ["approve", "reject", "revise"]
    client.force_login(personas.admin)
    for item, action in ((refund, "revise"), (triage, "approve")):
        answer = client.post(
            f"/inbox/items/{item.pk}/decide/",
            {"action": action, "feedback": "x"},
            headers={"Accept": "application/json"},
        )
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "action_not_supported"


def test_outside_code_registers_a_kind_and_a_workflow_may_declare_more(demo):
    from reviewconsole.inbox.models import Queue

    sales = Queue.objects.get(slug="sales")
    register_request_kind(RequestKind("approval_only", ("approve",)))
    try:
        [item] = make_items(sales, 1, workflow="vip-discount", kind="input", metadata={"kind": "approval_only"})
        assert allowed_actions(item) == ["approve"]
        [more] = make_items(
            sales, 1, workflow="vip-discount", kind="input", metadata={"actions": ["approve", "revise"]}
        )
        assert allowed_actions(more) == ["approve", "revise"]
        with pytest.raises(ValueError):
            register_request_kind(RequestKind("bad", ("launch",)))
    finally:
        REQUEST_KINDS.pop("approval_only", None)


def test_bulk_approve_skips_a_request_that_takes_no_approval(client, personas, start_session):
    _, [triage] = start_session("incident-triage", {"title": "Disk full", "details": "db01"})
    client.force_login(personas.admin)
    response = client.post("/inbox/bulk/", {"action": "approve", "ids": [triage.pk]}, follow=True)
    assert "approve it on its own page" in response.content.decode()
    triage.refresh_from_db()
    assert triage.status == "pending"
