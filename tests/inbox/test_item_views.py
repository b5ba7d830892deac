"""The item pages: a view per kind of request, the picture, history, status JSON, claim buttons,
refusals with readable reasons, and H16 (no GET changes anything)."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, WorkflowSession


def _page(client, user, item):
    client.force_login(user)
    response = client.get(f"/inbox/items/{item.pk}/")
    assert response.status_code == 200
    return response, response.content.decode()


def test_a_vip_discount_shows_customer_tier_and_discount(client, personas, start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123", "message": "Any <b>deal</b>?"})
    response, page = _page(client, personas.admin, item)
    assert response.context["kind"] == "vip_discount"
    assert re.search(r'id="customer">c123 — Ada Lovelace<', page)
    assert 'id="tier">Verified VIP Member<' in page
    assert 'id="proposed-discount">20%<' in page
    assert "Any &lt;b&gt;deal&lt;/b&gt;?" in page
    assert response.context["actions"] == ["approve", "reject"]


def test_a_refund_approval_shows_order_amount_reason_and_limit(client, personas, start_session):
    _, [item] = start_session("refund-approval", {"order_id": "A-17", "amount": 250, "reason": "Arrived <broken>"})
    response, page = _page(client, personas.admin, item)
    facts = response.context["facts"]
    assert (facts["step"], facts["order_id"], facts["amount"], facts["policy_limit"]) == ("approval", "A-17", 250, 100)
    assert facts["over_limit"] is True
    assert "Arrived &lt;broken&gt;" in page
    assert response.context["actions"] == ["approve", "reject"]


def test_a_refund_confirmation_shows_the_tool_call(client, personas, start_session):
    _, [item] = start_session("refund-approval", {"order_id": "B-2", "amount": 40, "reason": "late"})
    response, page = _page(client, personas.admin, item)
    facts = response.context["facts"]
    assert (facts["step"], facts["tool"], facts["order_id"], facts["amount"]) == (
        "submission",
        "submit_refund",
        "B-2",
        40,
    )
    assert facts["reason"] == "late"
    assert "Submit this refund?" in page


def test_any_other_request_shows_its_message_and_payload_and_a_generated_form(client, personas, start_session):
    _, [item] = start_session("incident-triage", {"title": "Login <script>x()</script> down"})
    response, page = _page(client, personas.admin, item)
    assert response.context["kind"] == "incident_triage"
    assert 'id="payload"' in page and "&lt;script&gt;x()&lt;/script&gt;" in page
    assert "<script>x()" not in page
    for name in (
        "f.severity",
        "f.summary",
        "f.affected_customers",
        "f.page_on_call",
        "f.components.0",
        "f.contact.name",
    ):
        assert f'name="{name}"' in page, name
    assert '<option value="&quot;critical&quot;">critical</option>' in page
    assert 'type="number"' in page and 'step="1"' in page
    assert response.context["actions"] == ["answer"]


def test_an_invalid_form_comes_back_with_its_errors_and_values(client, personas, start_session):
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    client.force_login(personas.admin)
    data = {"action": "answer", "f.severity": '"high"', "f.summary": "Cards fail", "f.affected_customers": "lots"}
    response = client.post(f"/inbox/items/{item.pk}/decide/", data)
    assert response.status_code == 400
    page = response.content.decode()
    assert response.context["error"] == "Correct the highlighted fields; nothing was recorded."
    assert 'id="id-f-affected_customers-error">Enter a whole number.' in page
    assert 'id="id-f-contact-name-error">This field is required.' in page
    assert ">Cards fail</textarea>" in page
    assert (Item.objects.get(pk=item.pk).status, Answer.objects.count()) == ("pending", 0)


def test_the_email_page_shows_the_diff_to_the_previous_draft_and_links_the_history(
    client, manager, start_review, on_commit
):
    session, first = start_review()
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="revise", text="shorter")
    second = Item.objects.get(session=session, status="pending")
    response, page = _page(client, manager, second)
    changes = response.context["facts"]["changes"]
    assert any(line.op == "+" and "We are sorry about this." in line.text for line in changes)
    assert any(line.op == "-" and "We have opened a case" in line.text for line in changes)
    assert f'href="/inbox/items/{second.pk}/history/"' in page
    history = client.get(f"/inbox/items/{second.pk}/history/")
    assert [r.number for r in history.context["revisions"]] == [1, 2]
    assert history.context["revisions"][0].feedback == "shorter"
    assert "Draft 2" in history.content.decode()


def test_the_page_has_the_workflow_picture_with_the_waiting_node(client, manager, start_review):
    _, item = start_review()
    response, page = _page(client, manager, item)
    picture = response.context["picture"]
    assert picture.steps == ["process_input", "draft_email", "request_human_review"]
    assert picture.waiting == ["request_human_review"]
    assert 'class="mermaid" id="workflow-picture"' in page
    assert "n4 --&gt;|&quot;revise&quot;| n2" in page
    assert "'unsafe-inline'" in response["Content-Security-Policy"].split("style-src", 1)[1].split(";")[0]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"].split("script-src", 1)[1].split(";")[0]


def test_the_admin_session_page_has_the_picture(client, personas, start_review):
    session, _ = start_review()
    client.force_login(personas.auditor)
    page = client.get(f"/admin/workflow_sessions/workflowsession/{session.pk}/change/").content.decode()
    assert 'id="workflow-picture"' in page and "flowchart TD" in page
    assert "console/picture.js" in page


def test_viewing_an_item_is_audited(client, manager, start_review):
    _, item = start_review()
    _page(client, manager, item)
    assert AuditEntry.objects.filter(action="interrupt.view", target_id=str(item.pk), actor="user:manager").exists()


def test_the_status_json_says_where_the_item_stands(client, manager, start_review, on_commit):
    _, item = start_review()
    client.force_login(manager)
    assert client.get(f"/inbox/items/{item.pk}/status.json").json()["item"]["state"] == "pending"
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="approve")
    status = client.get(f"/inbox/items/{item.pk}/status.json").json()
    assert status["item"]["sentence"].startswith("This request was approved by manager at ")


def test_a_json_address_answers_an_item_outside_ones_queues_in_json_whatever_the_accept_header(
    client, personas, start_review
):
    _, item = start_review()  # in support; the other reviewer has finance only
    client.force_login(personas.other_reviewer)
    response = client.get(f"/inbox/items/{item.pk}/status.json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "item_unknown"


def test_claim_buttons_post_and_show_the_owner(client, personas, start_review):
    _, item = start_review()
    client.force_login(personas.reviewer)
    response = client.post(f"/inbox/items/{item.pk}/claim/")
    assert (response.status_code, response["Location"]) == (302, f"/inbox/items/{item.pk}/")
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert 'id="owner">p-reviewer<' in page and 'id="unclaim"' in page
    manager = Client()
    manager.force_login(personas.queue_manager)
    page = manager.get(f"/inbox/items/{item.pk}/").content.decode()
    assert "Claimed by <strong>p-reviewer</strong>" in page and 'id="take-over"' in page
    response = manager.post(f"/inbox/items/{item.pk}/take-over/")
    assert response.status_code == 302
    again = client.post(f"/inbox/items/{item.pk}/claim/")
    assert again.status_code == 409
    assert again.context["conflict"].startswith("This request is claimed by p-manager at ")


def test_a_reviewer_gets_403_for_take_over_with_the_reason(client, personas, start_review):
    _, item = start_review()
    client.force_login(personas.reviewer)
    response = client.post(f"/inbox/items/{item.pk}/take-over/", headers={"Accept": "application/json"})
    assert response.status_code == 403
    assert response.json() == {"error": {"code": "forbidden", "message": "Only a manager of this queue can do that."}}


def test_a_superseded_item_refuses_with_a_readable_409(client, manager, start_review):
    _, item = start_review()
    Item.objects.filter(pk=item.pk).update(status="cancelled")
    client.force_login(manager)
    response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    assert response.status_code == 409
    assert "superseded" in response.context["conflict"] and "the session moved on" in response.context["conflict"]


def test_a_new_item_emails_its_queue_members_with_a_link(demo, personas, start_review, settings):
    mail.outbox.clear()
    personas.reviewer.email = "rev@example.com"
    personas.reviewer.save()
    personas.other_reviewer.email = "other@example.com"
    personas.other_reviewer.save()
    _, item = start_review()
    to = sorted(m.to[0] for m in mail.outbox)
    assert "rev@example.com" in to and "manager@example.com" in to
    assert "other@example.com" not in to
    message = next(m for m in mail.outbox if m.to == ["rev@example.com"])
    assert message.subject.startswith("[reviewconsole] New request in Support: Email reply — About your message: My ")
    assert f"http://127.0.0.1:8000/inbox/items/{item.pk}/" in message.body


URLS = [
    "/inbox/",
    "/inbox/items.json",
    "/inbox/changes.json?since=",
    "/inbox/bulk/?action=approve&ids={pk}",
    "/inbox/items/{pk}/",
    "/inbox/items/{pk}/status.json",
    "/inbox/items/{pk}/history/",
    "/inbox/items/{pk}/decide/?action=approve",
    "/inbox/items/{pk}/claim/",
    "/inbox/items/{pk}/unclaim/",
    "/inbox/items/{pk}/take-over/",
    "/inbox/items/{pk}/reassign/?to_queue=finance",
]


@pytest.mark.parametrize("who", ["anonymous", "admin"])
def test_h16_no_get_of_any_inbox_or_notification_url_changes_anything(client, personas, start_review, who, on_commit):
    """H16: GET every decision and notification URL, anonymous and logged in: nothing changes."""
    mail.outbox.clear()
    session, item = start_review()
    links = [re.search(r"http://[^\s]+", m.body).group(0).removeprefix("http://127.0.0.1:8000") for m in mail.outbox]
    if who != "anonymous":
        client.force_login(getattr(personas, who))

    def state():
        row = Item.objects.get(pk=item.pk)
        s = WorkflowSession.objects.get(pk=session.pk)
        return (row.status, row.claimed_by_id, row.queue_id, s.version, s.status, Answer.objects.count())

    before = state()
    for url in [u.format(pk=item.pk) for u in URLS] + links:
        with on_commit():
            response = client.get(url)
        assert response.status_code in (200, 302, 405), (url, response.status_code)
    assert state() == before


@pytest.mark.parametrize("path", ["/inbox/items/{pk}/claim/", "/inbox/items/{pk}/take-over/", "/inbox/bulk/"])
def test_every_inbox_post_needs_the_csrf_token(personas, start_review, path):
    _, item = start_review()
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas.queue_manager)
    response = client.post(path.format(pk=item.pk), {"action": "claim", "ids": [item.pk]})
    assert response.status_code == 403
    assert Item.objects.get(pk=item.pk).claimed_by is None
