"""A decided item's page shows the decision first (issue 17): every field of a form's answer with
its label, the text sent after an edit (the unedited draft marked as not sent), feedback, the
reason, by whom and when."""

from __future__ import annotations

import re

from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pages.decided import answered_fields, decision_shown

TRIAGE = {
    "f.severity": '"high"',
    "f.summary": "Card payments <b>fail</b>",
    "f.affected_customers": "1200",
    "f.page_on_call": "1",
    "f.components.0": "checkout",
    "f.components.1": "payments",
    "f.contact.name": "Dana",
    "f.contact.email": "dana@example.com",
}


def _page(client, item):
    response = client.get(f"/inbox/items/{item.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def _decision(page):
    found = re.search(r'<section class="decided".*?</section>', page, re.S)
    assert found, "no decision section"
    return found.group(0)


def test_a_triage_answer_shows_every_field_with_its_label(client, manager, start_session, on_commit):
    _, [item] = start_session("incident-triage", {"title": "Checkout down", "details": "502s"})
    client.force_login(manager)
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "answer", **TRIAGE})
    assert response.status_code == 302, response.content.decode()[:2000]
    item.refresh_from_db()
    page = _page(client, item)
    section = _decision(page)
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section)
    assert pairs == [
        ("Severity", "high"),
        ("Summary", "Card payments &lt;b&gt;fail&lt;/b&gt;"),
        ("Affected customers", "1,200"),
        ("Page on call", "yes"),
        ("Components", "checkout, payments"),
        ("Contact: Name", "Dana"),
        ("Contact: Email", "dana@example.com"),
    ]
    assert 'id="decision-by">manager<' in section and "Answered" in section
    assert page.index('id="decision"') < page.index('id="session-outcome"') < page.index('id="payload"')  # first


def test_an_edited_reply_shows_the_text_sent_then_the_edit_and_not_the_draft_as_sent(
    client, manager, start_session, on_commit
):
    _, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    client.force_login(manager)
    edited = "Subject: Your parcel\n\nDear Ms Rivera,\n\nIt is on its way."
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve", "edit_draft": "1", "draft": edited})
    item.refresh_from_db()
    page = _page(client, item)
    section = _decision(page)
    assert "Sent, as edited by the reviewer" in section
    assert re.search(r'id="sent-text">Subject: Your parcel\s+Dear Ms Rivera,', section)
    assert 'id="stored-diff"' in section and section.index('id="sent-text"') < section.index('id="stored-diff"')
    assert "The model's draft, before the reviewer's edit (not sent)" in page
    assert "<h2>Drafted reply" not in page  # the model's draft is not presented as the reply
    assert page.count('id="stored-diff"') == 1


def test_an_unedited_approval_shows_the_draft_as_sent(client, manager, start_session, on_commit):
    _, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    item.refresh_from_db()
    shown = decision_shown(item)
    assert shown is not None and shown.label == "Approved" and not shown.edited
    assert shown.sent is not None and shown.sent.startswith("Subject: About your message: Parcel lost")
    assert "Sent as drafted" in _decision(_page(client, item))


def test_feedback_and_a_rejection_reason_are_shown(client, manager, start_session, on_commit):
    _, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "revise", "feedback": "Be <i>shorter</i>"})
    item.refresh_from_db()
    section = _decision(_page(client, item))
    assert 'id="decision-feedback">Be &lt;i&gt;shorter&lt;/i&gt;<' in section and "Feedback" in section
    newer = Item.objects.get(session=item.session, status="pending")
    link = f'<a href="/inbox/items/{newer.pk}/">'
    assert f'id="replaced-by">The new draft is waiting: {link}' in section  # the answered draft leads on
    with on_commit():
        client.post(f"/inbox/items/{newer.pk}/decide/", {"action": "reject", "reason": "Wrong customer"})
    newer.refresh_from_db()
    section = _decision(_page(client, newer))
    assert 'id="decision-reason">Wrong customer<' in section and "Rejected" in section
    assert 'id="sent-text"' not in section and "replaced-by" not in section
    assert f'id="replaced-by">The draft written after this feedback: {link}' in _decision(_page(client, item))


def test_a_waiting_item_has_no_decision_section(client, manager, start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(manager)
    assert decision_shown(item) is None
    assert 'id="decision"' not in _page(client, item)


def test_fields_of_answers_the_schema_does_not_name_and_lists_of_objects():
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object"}}}}
    fields = answered_fields({"items": [{"sku": "A", "qty": 2}], "note": None}, schema)
    assert [(f.label, f.value) for f in fields] == [("Items 1: Sku", "A"), ("Items 1: Qty", "2"), ("Note", "—")]
    assert [(f.label, f.value) for f in answered_fields("yes", None)] == [("Answer", "yes")]


def test_who_decided_and_when_is_said_once_after_what_was_decided(client, personas, start_review, on_commit):
    """Found in issue 17: the owner line, the status sentence and the decision's heading each
    named the decider."""
    from reviewconsole.inbox.items.decisions import interrupt_decide

    _, item = start_review()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.queue_manager, action="reject", reason="Wrong customer")
    client.force_login(personas.reviewer)
    page = _page(client, item)
    assert page.count("p-manager") == 1
    assert 'id="decided-by"' not in page and "This request was rejected" not in page
    assert re.search(r'id="status-banner"[^>]*></p>', page)  # nothing to add to the decision below
    section = _decision(page)
    assert section.index("Rejected</h2>") < section.index('id="decision-reason"') < section.index('id="decision-who"')
    assert re.search(r'By <span id="decision-by">p-manager</span>, <span id="decision-at"><time[^>]*>', section)
    assert page.index('id="decision"') < page.index('id="session-outcome"')


def test_the_status_json_carries_the_decision_section_escaped(client, personas, start_review, on_commit):
    from reviewconsole.inbox.items.decisions import interrupt_decide

    _, item = start_review()
    client.force_login(personas.reviewer)
    status = f"/inbox/items/{item.pk}/status.json"
    assert client.get(status).json()["decision"] is None  # waiting: nothing decided
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.queue_manager, action="reject", reason="<img src=x onerror=1>")
    decision = client.get(status).json()["decision"]
    assert decision.startswith('<section class="decided" id="decision"') and decision.rstrip().endswith("</section>")
    assert 'id="decision-reason">&lt;img src=x onerror=1&gt;<' in decision and "<img" not in decision
    assert 'By <span id="decision-by">p-manager</span>' in decision
    assert _without_times(decision.strip()) == _without_times(_decision(_page(client, item)))  # the page's own section


def _without_times(html):
    return re.sub(r"<time[^>]*>.*?</time>", "", html)
