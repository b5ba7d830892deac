"""The admin for auditors: every session with its timeline and decisions, and nothing to change."""

from __future__ import annotations

import re

import pytest

from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item, Queue
from reviewconsole.workflow_sessions.models import Event, WorkflowSession

SESSIONS = "/admin/workflow_sessions/workflowsession/"


@pytest.fixture
def revised_then_approved(start_review, manager, on_commit):
    session, first = start_review()
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="revise", text="shorter")
    with on_commit():
        interrupt_decide(interrupt=session.items.get(status="pending"), user=manager, action="approve")
    session.refresh_from_db()
    return session


@pytest.fixture
def as_auditor(client, auditor):
    client.force_login(auditor)
    return client


def test_the_auditor_sees_every_session(as_auditor, revised_then_approved, start_review):
    other, _ = start_review("The charger is missing")
    response = as_auditor.get(SESSIONS)
    assert response.status_code == 200
    page = response.content.decode()
    assert revised_then_approved.id in page
    assert other.id in page


def test_the_auditor_sees_the_timeline_and_who_decided(as_auditor, revised_then_approved):
    session = revised_then_approved
    response = as_auditor.get(f"{SESSIONS}{session.id}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    seqs = [int(n) for n in re.findall(r"<tr>\s*<td>(\d+)</td>", page)]
    assert seqs == list(range(1, session.events.count() + 1))  # one timeline row per event
    assert page.count("user <small>(manager)</small>") == 2  # each answer names who gave it
    for node in ("process_input@1", "draft_email@1", "draft_email@2", "handle_human_review@2", "send_email@1"):
        assert node in page
    assert "<code>revise</code>" in page
    assert "<code>approved</code>" in page
    assert "<code>feedback</code> = shorter" in page
    assert "calls adk_request_input" in page
    assert "response to adk_request_input" in page
    assert "Draft approved and sent successfully." in page
    assert page.count("manager") >= 2  # the interrupts inline: who decided each
    assert 'name="_save"' not in page


@pytest.mark.parametrize(
    "path",
    [
        f"{SESSIONS}add/",
        f"{SESSIONS}{{session}}/delete/",
        "/admin/inbox/item/add/",
        "/admin/inbox/item/{interrupt}/delete/",
        "/admin/inbox/queue/add/",
        "/admin/inbox/queue/{queue}/delete/",
        "/admin/hooks/webhookendpoint/add/",
        "/admin/hooks/webhookendpoint/{endpoint}/delete/",
        "/admin/workflow_sessions/event/{event}/delete/",
        "/admin/auth/user/add/",
    ],
)
def test_the_auditor_may_not_add_or_delete(as_auditor, revised_then_approved, path):
    url = path.format(
        session=revised_then_approved.id,
        interrupt=Item.objects.first().pk,
        queue=Queue.objects.get(slug="support").pk,
        endpoint=WebhookEndpoint.objects.get(slug="email-review").pk,
        event=Event.objects.first().pk,
    )
    assert as_auditor.get(url).status_code == 403
    assert as_auditor.post(url, {"post": "yes"}).status_code == 403
    assert WorkflowSession.objects.filter(pk=revised_then_approved.id).exists()
    assert Item.objects.count() == 2
    assert Queue.objects.filter(slug="support").exists()


def test_the_auditor_may_not_change_a_session(as_auditor, revised_then_approved):
    session = revised_then_approved
    response = as_auditor.post(f"{SESSIONS}{session.id}/change/", {"status": "failed", "title": "changed"})
    assert response.status_code == 403
    session.refresh_from_db()
    assert (session.status, session.title) == ("completed", "My phone battery drains too fast")


def test_the_auditor_may_not_change_a_queue_or_an_endpoint(as_auditor, demo):
    queue = Queue.objects.get(slug="support")
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    queue_change = f"/admin/inbox/queue/{queue.pk}/change/"
    response = as_auditor.post(queue_change, {"name": "Hacked", "slug": "support", "group": queue.group_id})
    assert response.status_code == 403
    endpoint_change = f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/"
    response = as_auditor.post(endpoint_change, {"slug": "email-review", "workflow": "x", "enabled": ""})
    assert response.status_code == 403
    queue.refresh_from_db()
    endpoint.refresh_from_db()
    assert (queue.name, endpoint.workflow, endpoint.enabled) == ("Support", "email-review", True)


def test_the_auditor_may_not_bulk_delete(as_auditor, revised_then_approved):
    response = as_auditor.post(
        SESSIONS, {"action": "delete_selected", "_selected_action": [revised_then_approved.id], "post": "yes"}
    )
    assert response.status_code in (200, 302, 403)
    assert WorkflowSession.objects.filter(pk=revised_then_approved.id).exists()


def test_the_auditor_does_not_see_webhook_secrets(as_auditor, demo):
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    response = as_auditor.get(f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/")
    assert response.status_code == 200
    assert demo["secret"] not in response.content.decode()
    assert as_auditor.get("/admin/hooks/webhooksecret/").status_code in (403, 404)


def test_the_auditor_sees_webhook_deliveries(as_auditor, revised_then_approved):
    delivery = WebhookDelivery.objects.get()
    response = as_auditor.get(f"/admin/hooks/webhookdelivery/{delivery.pk}/change/")
    assert response.status_code == 200
    assert delivery.webhook_id in response.content.decode()


def test_a_reviewer_cannot_open_the_admin(client, manager, revised_then_approved):
    client.force_login(manager)
    response = client.get(SESSIONS)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_an_event_shows_its_time_as_a_date(as_auditor, revised_then_approved):
    """ADK's timestamp is seconds since the epoch: the list and the page show it as a date too."""
    import datetime as dt

    event = Event.objects.filter(session=revised_then_approved).first()
    shown = dt.datetime.fromtimestamp(event.timestamp, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")
    for url in ("/admin/workflow_sessions/event/", f"/admin/workflow_sessions/event/{event.pk}/change/"):
        page = as_auditor.get(url).content.decode()
        assert f"{shown} UTC" in page, url
