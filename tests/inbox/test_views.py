"""Inbox pages: login, queue visibility, the detail page, and decisions through the form."""

from __future__ import annotations

import zoneinfo

import pytest
from django.test import Client
from django.utils import timezone

from reviewconsole.inbox.models import Item
from reviewconsole.preferences.models import Preference
from reviewconsole.workflow_sessions.models import Answer, Event
from tests.conftest import COMPLAINT, end_message


@pytest.fixture
def review(start_review):
    """A waiting email review: ``(session, interrupt)``."""
    return start_review()


def _decide(client, interrupt, action, feedback="", reason=""):
    if action == "reject" and not reason:
        reason = "Not what the customer asked"
    data = {"action": action, "feedback": feedback, "reason": reason}
    return client.post(f"/inbox/items/{interrupt.pk}/decide/", data)


# -- login and visibility -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/inbox/"),
        ("get", "/inbox/items.json"),
        ("get", "/inbox/items/{pk}/"),
        ("post", "/inbox/items/{pk}/decide/"),
    ],
)
def test_every_reviewer_page_requires_login(client, review, method, path):
    _, interrupt = review
    url = path.format(pk=interrupt.pk)
    response = getattr(client, method)(url, {"action": "approve"} if method == "post" else None)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"


def test_home_redirects_to_the_inbox(client, manager):
    client.force_login(manager)
    response = client.get("/")
    assert (response.status_code, response["Location"]) == (302, "/inbox/")


def test_login_with_the_demo_password_opens_the_inbox(client, demo):
    response = client.post("/accounts/login/", {"username": "manager", "password": demo["password"]})
    assert (response.status_code, response["Location"]) == (302, "/inbox/")
    assert client.get("/inbox/").status_code == 200


def test_the_inbox_lists_pending_items_of_the_users_queues(client, manager, review):
    _, interrupt = review
    client.force_login(manager)
    response = client.get("/inbox/")
    assert response.status_code == 200
    assert [i.pk for i in response.context["items"]] == [interrupt.pk]
    assert f'href="/inbox/items/{interrupt.pk}/"' in response.content.decode()
    assert client.get("/inbox/items.json").json()["items"][0]["id"] == interrupt.pk


def test_a_reviewer_of_other_queues_sees_nothing(client, outsider, review):
    client.force_login(outsider)
    response = client.get("/inbox/")
    assert response.status_code == 200
    assert list(response.context["items"]) == []
    assert client.get("/inbox/items.json").json()["items"] == []


def test_a_reviewer_of_other_queues_gets_404_for_the_item(client, outsider, review):
    _, interrupt = review
    client.force_login(outsider)
    assert client.get(f"/inbox/items/{interrupt.pk}/").status_code == 404
    assert _decide(client, interrupt, "approve").status_code == 404
    interrupt.refresh_from_db()
    assert (interrupt.status, interrupt.decided_by_label) == ("pending", "")
    assert Answer.objects.count() == 0


@pytest.mark.parametrize("action", ["decide", "claim", "unclaim", "take-over", "reassign", "retry", "status.json"])
def test_a_json_caller_gets_the_json_404_for_a_missing_or_hidden_item(client, outsider, review, action):
    _, interrupt = review
    client.force_login(outsider)
    send = client.get if action == "status.json" else client.post
    for pk in (interrupt.pk, interrupt.pk + 1000):  # outside the user's queues; no such item
        url = f"/inbox/items/{pk}/{action}" + ("" if action == "status.json" else "/")
        data = {"action": "approve"} if send is client.post else None
        response = send(url, data, headers={"Accept": "application/json"})
        assert (response.status_code, response["Content-Type"]) == (404, "application/json"), url
        assert response.json() == {"error": {"code": "item_unknown", "message": "No such item in your queues."}}
    assert client.post(f"/inbox/items/{interrupt.pk + 1000}/decide/", {"action": "approve"}).status_code == 404
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert Answer.objects.count() == 0


def test_the_detail_page_shows_the_complaint_and_the_labelled_offline_draft(client, manager, review):
    session, interrupt = review
    client.force_login(manager)
    response = client.get(f"/inbox/items/{interrupt.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert COMPLAINT in page
    assert "offline draft model" in page
    assert response.context["draft"] == session.state["draft"]
    assert "Subject: About your message: My phone battery drains too fast" in page


def test_the_detail_page_escapes_what_the_caller_wrote(client, manager, start_review):
    _, interrupt = start_review("<script>alert('x')</script> broken")
    client.force_login(manager)
    page = client.get(f"/inbox/items/{interrupt.pk}/").content.decode()
    assert "<script>alert(" not in page
    assert "&lt;script&gt;alert(" in page


# -- decisions ------------------------------------------------------------------------------------


def test_approve_sends_the_draft(client, manager, review, on_commit):
    session, interrupt = review
    client.force_login(manager)
    with on_commit():
        response = _decide(client, interrupt, "approve")
    assert (response.status_code, response["Location"]) == (302, "/inbox/")
    interrupt.refresh_from_db()
    session.refresh_from_db()
    assert (interrupt.status, interrupt.decision, interrupt.response) == ("resolved", "approve", "approve")
    assert (interrupt.decided_by, interrupt.decided_by_label) == (manager, "manager")
    assert interrupt.decided_at is not None
    assert session.status == "completed"
    assert end_message(session) == "Draft approved and sent successfully."


def test_reject_drops_the_draft(client, manager, review, on_commit):
    session, interrupt = review
    client.force_login(manager)
    with on_commit():
        response = _decide(client, interrupt, "reject")
    assert response.status_code == 302
    session.refresh_from_db()
    assert session.status == "completed"
    assert end_message(session) == "Draft rejected."
    assert "Draft approved and sent successfully." not in [end_message(session)]


def test_feedback_makes_a_new_request_whose_draft_applies_it(client, manager, review, on_commit):
    session, first = review
    first_draft = session.state["draft"]
    client.force_login(manager)
    with on_commit():
        response = _decide(client, first, "revise", "shorter")
    assert response.status_code == 302
    session.refresh_from_db()
    first.refresh_from_db()
    assert (first.status, first.decision, first.response) == ("resolved", "revise", "shorter")
    assert session.status == "waiting"
    second = Item.objects.get(session=session, status="pending")
    assert second.pk != first.pk
    assert session.state["feedback"] == "shorter"
    assert session.state["draft"] != first_draft
    assert len(session.state["draft"]) < len(first_draft)
    assert "Revised after reviewer feedback" not in session.state["draft"]
    assert session.state["draft"] in second.message
    page = client.get(f"/inbox/items/{second.pk}/").content.decode()
    assert '<span id="last-feedback">shorter</span>' in page

    with on_commit():
        _decide(client, second, "approve")
    session.refresh_from_db()
    assert session.status == "completed"
    assert end_message(session) == "Draft approved and sent successfully."


def test_a_second_decision_gets_409_naming_who_and_when(client, manager, review, on_commit):
    session, interrupt = review
    client.force_login(manager)
    with on_commit():
        _decide(client, interrupt, "approve")
    interrupt.refresh_from_db()
    session.refresh_from_db()
    events, answers, version = Event.objects.count(), Answer.objects.count(), session.version

    with on_commit():
        response = _decide(client, interrupt, "reject")

    assert response.status_code == 409
    when = interrupt.decided_at.strftime("%Y-%m-%d %H:%M:%S")
    expected = f"This request was already approved by manager at {when} UTC."
    assert response.context["conflict"] == expected
    assert expected in response.content.decode()
    Preference.objects.create(user=manager, time_zone="Europe/Berlin", time_zone_chosen=True)
    in_berlin = Client()  # a new login reads the preference
    in_berlin.force_login(manager)
    with on_commit():
        berlin = _decide(in_berlin, interrupt, "reject").context["conflict"]  # in the person's zone, named
    local = timezone.localtime(interrupt.decided_at, zoneinfo.ZoneInfo("Europe/Berlin"))
    assert berlin == f"This request was already approved by manager at {local:%Y-%m-%d %H:%M:%S %Z} (Europe/Berlin)."
    interrupt.refresh_from_db()
    session.refresh_from_db()
    assert (interrupt.decision, interrupt.response) == ("approve", "approve")
    assert (Event.objects.count(), Answer.objects.count(), session.version) == (events, answers, version)
    assert end_message(session) == "Draft approved and sent successfully."


def test_feedback_without_text_is_refused(client, manager, review, on_commit):
    _, interrupt = review
    client.force_login(manager)
    with on_commit():
        response = _decide(client, interrupt, "revise", "   ")
    assert response.status_code == 400
    assert response.context["error"] == "Write the feedback the next draft should apply."
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert Answer.objects.count() == 0


def test_an_unknown_action_is_refused(client, manager, review):
    _, interrupt = review
    client.force_login(manager)
    response = _decide(client, interrupt, "delete")
    assert response.status_code == 400
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"


def test_get_on_the_decide_url_changes_nothing(client, manager, review):
    _, interrupt = review
    client.force_login(manager)
    response = client.get(f"/inbox/items/{interrupt.pk}/decide/", {"action": "approve"})
    assert response.status_code == 405
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"


def test_a_decision_needs_the_csrf_token(manager, review):
    from django.test import Client

    _, interrupt = review
    client = Client(enforce_csrf_checks=True)
    client.force_login(manager)
    assert _decide(client, interrupt, "approve").status_code == 403
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"


def test_a_decided_item_leaves_the_inbox_and_its_page_says_who_decided(client, manager, review, on_commit):
    _, interrupt = review
    client.force_login(manager)
    with on_commit():
        _decide(client, interrupt, "reject")
    assert client.get("/inbox/items.json").json()["items"] == []
    response = client.get(f"/inbox/items/{interrupt.pk}/")
    assert response.status_code == 200
    assert "Rejected</h2>" in response.content.decode()
    assert 'By <span id="decision-by">manager</span>' in response.content.decode()
    assert 'name="action"' not in response.content.decode()


def test_a_decision_on_a_workflow_no_longer_registered_is_refused(client, manager, review, on_commit):
    session, interrupt = review
    type(session).objects.filter(pk=session.pk).update(workflow="retired-workflow")
    client.force_login(manager)
    with on_commit():
        response = _decide(client, interrupt, "approve")
    assert response.status_code == 409
    assert response.context["error"] == "This workflow is not available any more; nothing was recorded."
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert Answer.objects.count() == 0
