"""The item page's lifecycle forms and comments (inbox/pages/lifecycle_views.py): who may, CSRF, JSON, escaping."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.test import Client
from django.utils import timezone

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.models import Comment, Item, QueueChange
from reviewconsole.preferences.models import Preference
from reviewconsole.workflow_sessions.models import WorkflowSession

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def item(start_review, personas):
    return start_review()[1]


def _client(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


def _soon(hours=5):
    return (timezone.now() + dt.timedelta(hours=hours)).astimezone(dt.UTC)


def test_the_page_offers_defer_and_escalate_to_reviewers_and_cancel_to_managers(item, personas):
    page = _client(personas.reviewer).get(f"/inbox/items/{item.pk}/").content.decode()
    assert 'id="defer-form"' in page and 'id="escalate-form"' in page and 'id="comment-form"' in page
    assert 'value="support-leads"' in page and 'value="triage"' in page
    assert 'id="cancel-form"' not in page
    assert 'id="release-form"' not in page  # nothing to return: nobody holds it
    managed = _client(personas.queue_manager).get(f"/inbox/items/{item.pk}/").content.decode()
    assert 'id="cancel-form"' in managed


def test_defer_from_the_form(item, personas):
    due = _soon()
    response = _client(personas.reviewer).post(
        f"/inbox/items/{item.pk}/defer/", {"due_at": due.strftime("%Y-%m-%dT%H:%M"), "note": "Call back tomorrow"}
    )
    assert response.status_code == 302 and response.url == f"/inbox/items/{item.pk}/"
    row = Item.objects.get(pk=item.pk)
    assert row.deferred_until == due.replace(second=0, microsecond=0)
    assert QueueChange.objects.filter(item=row, event="interrupt.deferred").count() == 1
    page = _client(personas.reviewer).get(f"/inbox/items/{item.pk}/").content.decode()
    assert "Call back tomorrow" in page and 'id="deferred"' in page


def test_defer_as_json_and_its_refusals(item, personas):
    client = _client(personas.reviewer)
    url = f"/inbox/items/{item.pk}/defer/"
    ok = client.post(url, {"due_at": _soon().isoformat(), "note": "x"}, **JSON)
    assert ok.status_code == 200 and ok.json()["item"]["state"] == "deferred"
    bad = client.post(url, {"due_at": "tomorrow", "note": "x"}, **JSON)
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid")
    past = client.post(url, {"due_at": "2020-01-01T00:00", "note": "x"}, **JSON)
    assert past.status_code == 400 and "future" in past.json()["error"]["message"]


def test_a_reviewer_of_another_queue_gets_404_and_a_reviewer_cancelling_403(item, personas):
    for action, data in (("defer", {"due_at": _soon().isoformat(), "note": "x"}), ("escalate", {"note": "x"})):
        response = _client(personas.other_reviewer).post(f"/inbox/items/{item.pk}/{action}/", data, **JSON)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "item_unknown")
    response = _client(personas.reviewer).post(f"/inbox/items/{item.pk}/cancel/", {"reason": "x"}, **JSON)
    assert (response.status_code, response.json()["error"]["code"]) == (403, "forbidden")
    assert Item.objects.get(pk=item.pk).is_pending


def test_the_forms_need_the_csrf_token(item, personas):
    client = _client(personas.queue_manager, enforce_csrf_checks=True)
    for action in ("defer", "release", "escalate", "cancel", "comment"):
        assert (
            client.post(f"/inbox/items/{item.pk}/{action}/", {"note": "x", "reason": "x", "text": "x"}).status_code
            == 403
        )
    assert not Comment.objects.exists()


def test_escalate_from_the_form_leaves_the_reviewer_at_the_inbox(item, personas):
    response = _client(personas.reviewer).post(
        f"/inbox/items/{item.pk}/escalate/", {"to_queue": "support-leads", "note": "Needs a lead"}
    )
    assert (response.status_code, response.url) == (302, "/inbox/")  # they do not review support-leads
    assert Item.objects.get(pk=item.pk).queue.slug == "support-leads"
    refused = _client(personas.reviewer).post(f"/inbox/items/{item.pk}/escalate/", {"note": "again"}, **JSON)
    assert refused.status_code == 403  # they still see it (it left their queue), they may not act on it


def test_escalate_refuses_a_queue_the_workflow_does_not_allow(item, personas):
    response = _client(personas.reviewer).post(
        f"/inbox/items/{item.pk}/escalate/", {"to_queue": "finance", "note": "x"}, **JSON
    )
    assert response.status_code == 400
    assert response.json()["error"]["allowed"] == ["support-leads", "triage"]


def test_return_to_queue_from_the_form(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    client = _client(personas.reviewer)
    assert 'id="release-form"' in client.get(f"/inbox/items/{item.pk}/").content.decode()
    response = client.post(f"/inbox/items/{item.pk}/release/", {"note": "Half done: see the tone"})
    assert response.status_code == 302
    assert Item.objects.get(pk=item.pk).claimed_by is None
    again = client.post(f"/inbox/items/{item.pk}/release/", {"note": "x"}, **JSON)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "not_claimed")


def test_a_manager_cancels_the_item_or_the_session(start_review, personas, on_commit):
    _, first = start_review()
    with on_commit():
        response = _client(personas.queue_manager).post(f"/inbox/items/{first.pk}/cancel/", {"reason": "Spam"})
    assert response.status_code == 302
    row = Item.objects.get(pk=first.pk)
    assert (row.decision, row.decided_by_label, row.reason) == ("cancelled", "p-manager", "Spam")
    page = _client(personas.reviewer).get(f"/inbox/items/{first.pk}/").content.decode()
    assert "Cancelled</h2>" in page and 'By <span id="decision-by">p-manager</span>' in page and "Spam" in page
    _, second = start_review()
    with on_commit():
        _client(personas.queue_manager).post(f"/inbox/items/{second.pk}/cancel/", {"reason": "Dup", "scope": "session"})
    assert WorkflowSession.objects.get(pk=second.session_id).status == "cancelled"
    row = Item.objects.get(pk=second.pk)
    assert (row.display_status, row.decided_by_label, row.reason) == ("cancelled", "p-manager", "Dup")
    page = _client(personas.reviewer).get(f"/inbox/items/{second.pk}/").content.decode()
    assert "cancelled by p-manager" in page and "its session was cancelled" in page


def test_a_cancel_of_an_unknown_scope_is_refused_and_cancels_nothing(item, personas, on_commit):
    """A mistyped ``session`` used to cancel the item alone, as if ``item`` had been asked."""
    with on_commit():
        response = _client(personas.queue_manager).post(
            f"/inbox/items/{item.pk}/cancel/", {"reason": "Dup", "scope": "sesion"}, **JSON
        )
    assert response.status_code == 400
    assert "whole session" in response.json()["error"]["message"]
    assert Item.objects.get(pk=item.pk).status == "pending"
    assert WorkflowSession.objects.get(pk=item.session_id).status == "waiting"


def test_a_cancel_that_lost_to_a_decision_is_409_naming_who(item, personas, on_commit):
    with on_commit():
        _client(personas.reviewer).post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    response = _client(personas.queue_manager).post(f"/inbox/items/{item.pk}/cancel/", {"reason": "x"}, **JSON)
    assert response.status_code == 409
    assert response.json()["error"]["decided_by"] == "p-reviewer"


def test_comments_are_escaped_on_the_page_and_audited(item, personas):
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    client = _client(personas.reviewer)
    response = client.post(f"/inbox/items/{item.pk}/comment/", {"text": hostile})
    assert response.status_code == 302
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert hostile not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    audit = AuditEntry.objects.get(action="interrupt.comment", target_id=str(item.pk))
    assert (audit.actor, audit.detail["text"]) == ("user:p-reviewer", hostile)
    assert QueueChange.objects.filter(item=item, event="interrupt.commented").count() == 1


def test_comment_refusals(item, personas):
    blank = _client(personas.reviewer).post(f"/inbox/items/{item.pk}/comment/", {"text": "  "}, **JSON)
    assert blank.status_code == 400
    long = _client(personas.reviewer).post(f"/inbox/items/{item.pk}/comment/", {"text": "x" * 4001}, **JSON)
    assert (long.status_code, long.json()["error"]["code"]) == (400, "answer_too_long")
    outsider = _client(personas.other_reviewer).post(f"/inbox/items/{item.pk}/comment/", {"text": "x"}, **JSON)
    assert outsider.status_code == 404
    added = _client(personas.reviewer).post(f"/inbox/items/{item.pk}/comment/", {"text": "ok"}, **JSON)
    assert added.status_code == 201 and added.json()["comment"]["author"] == "p-reviewer"


def test_defer_reads_and_says_the_time_in_the_persons_zone(item, personas):
    Preference.objects.create(user=personas.reviewer, time_zone="Asia/Tokyo", time_zone_chosen=True)
    tokyo = zoneinfo.ZoneInfo("Asia/Tokyo")
    due = _soon().astimezone(tokyo).replace(second=0, microsecond=0)
    client = _client(personas.reviewer)
    form = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert '<label for="defer-due">New due time (JST)</label>' in form
    response = client.post(
        f"/inbox/items/{item.pk}/defer/", {"due_at": due.strftime("%Y-%m-%dT%H:%M"), "note": "x"}, follow=True
    )
    assert Item.objects.get(pk=item.pk).deferred_until == due  # the typed wall time was Tokyo's
    assert f"Deferred until {due:%Y-%m-%d %H:%M}:00 JST (Asia/Tokyo)." in response.content.decode()
