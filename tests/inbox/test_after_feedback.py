"""After feedback: the decision bar's markup, the page that waits for the session's next draft,
and ``next.json``."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession


@pytest.fixture
def review(start_review):
    return start_review()


def test_the_decision_bar_holds_the_buttons_and_the_reason_of_the_decision_form(client, manager, review):
    _, item = review
    client.force_login(manager)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    bar = page[page.index('id="decision-bar"') : page.index('id="decision-form"')]  # above the form
    for button in ("approve", "reject", "revise"):
        assert f'form="decision-form" name="action" value="{button}"' in bar
    assert 'id="reason" name="reason" form="decision-form"' in bar
    assert 'id="reason-box" data-required>' in bar  # the inbox requires a reason to reject


def test_a_refund_whose_approval_needs_a_reason_always_shows_it(client, manager, start_session):
    _, items = start_session("refund-approval", {"order_id": "A-9", "amount": 900, "reason": "Broken"})
    client.force_login(manager)
    page = client.get(f"/inbox/items/{items[0].pk}/").content.decode()
    assert 'id="reason-box" data-always data-required>' in page


def test_feedback_leads_to_the_waiting_page_which_links_the_next_draft(client, manager, review, on_commit):
    session, first = review
    client.force_login(manager)
    with on_commit():
        response = client.post(f"/inbox/items/{first.pk}/decide/", {"action": "revise", "feedback": "shorter"})
    assert response.status_code == 302
    assert response["Location"] == f"/inbox/items/{first.pk}/after-feedback/"
    second = Item.objects.get(session=session, status="pending")
    page = client.get(response["Location"])
    assert page.status_code == 200
    text = page.content.decode()
    assert "Feedback sent: a new draft is being written" in text
    assert f'<a href="/inbox/items/{second.pk}/" id="next-request">open it</a>' in text
    assert '<span id="feedback-sent">shorter</span>' in text
    assert '<span id="feedback-by">you</span>' in text
    assert page.context["live"]["next_url"] == f"/inbox/items/{second.pk}/"
    data = client.get(f"/inbox/items/{first.pk}/next.json").json()
    assert data["next"]["id"] == second.pk
    assert data["session"]["status"] == "waiting"


def test_while_the_draft_is_written_the_page_waits(client, manager, review):
    session, first = review
    client.force_login(manager)
    # Decided with feedback, the next draft not written yet (its run has not happened).
    Item.objects.filter(pk=first.pk).update(status="resolved", decision="revise", response="shorter")
    page = client.get(f"/inbox/items/{first.pk}/after-feedback/")
    assert page.context["next_item"] is None
    assert 'data-state="waiting"' in page.content.decode()
    assert page.context["live"]["session"] == session.pk
    assert str(first.queue_id) in page.context["live"]["versions"]  # the socket's start, per queue
    assert client.get(f"/inbox/items/{first.pk}/next.json").json()["next"] is None


def test_once_the_session_ended_without_a_new_draft_the_page_says_so(client, manager, review):
    session, first = review
    client.force_login(manager)
    # Decided with feedback, then the session failed before writing the next draft.
    Item.objects.filter(pk=first.pk).update(status="resolved", decision="revise", response="shorter")
    WorkflowSession.objects.filter(pk=session.pk).update(status="failed")
    page = client.get(f"/inbox/items/{first.pk}/after-feedback/").content.decode()
    assert 'data-state="ended"' in page
    assert 'The session ended without a new draft: it is <strong id="session-status">failed</strong>.' in page
    assert client.get(f"/inbox/items/{first.pk}/next.json").json()["state"] == "ended"


@pytest.mark.parametrize(
    "fields", [{"action": "approve"}, {"action": "reject", "reason": "Wrong tone"}], ids=["approved", "rejected"]
)
def test_an_item_not_answered_with_feedback_sends_the_page_to_the_item(client, manager, review, on_commit, fields):
    _, first = review
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{first.pk}/decide/", fields)
    response = client.get(f"/inbox/items/{first.pk}/after-feedback/")
    assert (response.status_code, response["Location"]) == (302, f"/inbox/items/{first.pk}/")
    data = client.get(f"/inbox/items/{first.pk}/next.json").json()
    assert (data["state"], data["url"], data["next"]) == ("decided", f"/inbox/items/{first.pk}/", None)


def test_an_approval_the_item_has_not_heard_of_yet_also_sends_the_page_to_the_item(client, manager, review):
    _, first = review
    client.force_login(manager)
    client.post(f"/inbox/items/{first.pk}/decide/", {"action": "approve"})  # its relay never runs here
    assert Item.objects.get(pk=first.pk).status == "pending"
    response = client.get(f"/inbox/items/{first.pk}/after-feedback/")
    assert (response.status_code, response["Location"]) == (302, f"/inbox/items/{first.pk}/")


def test_before_any_decision_the_page_waits(client, manager, review):
    # A second tab opened on the waiting page before the feedback is sent.
    _, first = review
    client.force_login(manager)
    page = client.get(f"/inbox/items/{first.pk}/after-feedback/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-state="waiting"' in text
    assert 'id="feedback-sent"' not in text
    # found by an attack: it said "Feedback sent: a new draft is being written" before any feedback
    assert "Feedback sent" not in text and "No feedback has been sent on this draft yet" in text


REVIEW = {"title": "Reply to A-1001", "message": "Is this reply right?", "queue": "support", "kind": "text"}


def test_a_reviews_waiting_page_waits_for_its_clients_revision_and_then_links_it(client, manager, on_commit):
    from tests.api.conftest import make_api_client, post

    _, token = make_api_client("crm", workflows=["*"])
    with on_commit():
        older = post(client, "/api/v1/reviews", REVIEW, token).json()
    first = Item.objects.get(session_id=older["session_id"], status="pending")
    client.force_login(manager)
    with on_commit():
        sent = client.post(f"/inbox/items/{first.pk}/decide/", {"action": "revise", "feedback": "Ask for the order"})
    assert sent["Location"] == f"/inbox/items/{first.pk}/after-feedback/"
    assert WorkflowSession.objects.get(pk=older["session_id"]).status == "completed"  # the review is decided

    page = client.get(sent["Location"])
    text = page.content.decode()
    assert 'data-state="waiting"' in text  # not "ended": its revision comes in a session of its own
    assert "Waiting for the client to send the revised draft" in text
    assert page.context["live"]["review"] is True
    assert client.get(f"/inbox/items/{first.pk}/next.json").json()["state"] == "waiting"

    with on_commit():
        newer = post(client, "/api/v1/reviews", {**REVIEW, "revision_of": older["id"]}, token).json()
    second = Item.objects.get(session_id=newer["session_id"], status="pending")
    page = client.get(sent["Location"])
    assert f'<a href="/inbox/items/{second.pk}/" id="next-request">open it</a>' in page.content.decode()
    assert page.context["live"]["next_url"] == f"/inbox/items/{second.pk}/"
    data = client.get(f"/inbox/items/{first.pk}/next.json").json()
    assert (data["state"], data["next"]["id"]) == ("ready", second.pk)


def test_outside_the_users_queues_the_waiting_page_is_404(client, outsider, review):
    _, first = review
    client.force_login(outsider)
    assert client.get(f"/inbox/items/{first.pk}/after-feedback/").status_code == 404
    response = client.get(f"/inbox/items/{first.pk}/next.json", headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "item_unknown"


def test_another_reviewers_feedback_is_named_as_theirs(client, manager, personas, review, on_commit):
    """Found by an attack: the page told a second reviewer "Your feedback" for the manager's."""
    _, first = review
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{first.pk}/decide/", {"action": "revise", "feedback": "more"})
    client.force_login(personas.admin)
    text = client.get(f"/inbox/items/{first.pk}/after-feedback/").content.decode()
    assert '<span id="feedback-by">manager</span>' in text and "Your feedback" not in text
