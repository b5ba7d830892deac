"""The auditor's admin: filters, search, audited views, the ADK export (replayable), and nothing to change."""

from __future__ import annotations

import json

import pytest
from django.contrib import admin

from reviewconsole.audit.models import AuditEntry
from reviewconsole.demo import email_review
from reviewconsole.inbox.items.decisions import interrupt_decide
from tests.conformance.harness import Trace, _renumber, assert_matches, replay

SESSIONS = "/admin/workflow_sessions/workflowsession/"


@pytest.fixture
def reviewed(start_review, manager, on_commit):
    session, first = start_review()
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="revise", text="shorter")
    with on_commit():
        interrupt_decide(interrupt=session.items.get(status="pending"), user=manager, action="approve")
    session.refresh_from_db()
    return session


def test_sessions_filter_by_decider_queue_workflow_and_status(client, auditor, reviewed, start_review):
    other, _ = start_review("The charger is missing")
    client.force_login(auditor)
    page = client.get(SESSIONS, {"decider": "manager"}).content.decode()
    assert reviewed.id in page and other.id not in page
    page = client.get(SESSIONS, {"queue": "support", "status__exact": "waiting"}).content.decode()
    assert other.id in page and reviewed.id not in page
    page = client.get(SESSIONS, {"workflow": "email-review"}).content.decode()
    assert other.id in page and reviewed.id in page


def test_sessions_are_searchable_by_id_and_content(client, auditor, reviewed, start_review):
    other, _ = start_review("The charger is missing")
    client.force_login(auditor)
    page = client.get(SESSIONS, {"q": "charger"}).content.decode()
    assert other.id in page and reviewed.id not in page
    page = client.get(SESSIONS, {"q": reviewed.id}).content.decode()
    assert reviewed.id in page and other.id not in page
    page = client.get(SESSIONS, {"q": "sent successfully"}).content.decode()
    assert reviewed.id in page and other.id not in page


def test_the_timeline_shows_the_revision_diff(client, auditor, reviewed):
    client.force_login(auditor)
    page = client.get(f"{SESSIONS}{reviewed.id}/change/").content.decode()
    assert "revision of <code>draft</code>" in page
    assert "<ins>" in page and "<del>" in page
    assert AuditEntry.objects.filter(action="session.view", actor="user:auditor", target_id=reviewed.id).exists()


class ExportedTrace(Trace):
    """An exported session as a trace: the first message is the JSON input the session started with."""

    @property
    def first_message(self):
        return json.loads(super().first_message)


async def _replay(trace):
    return await replay(trace, lambda m: email_review.build(m))


def test_an_exported_session_replays_through_the_engine(client, auditor, reviewed):
    client.force_login(auditor)
    response = client.get(f"{SESSIONS}{reviewed.id}/export/")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    exported = json.loads(response.content)
    assert exported["id"] == reviewed.id
    assert len(exported["events"]) == reviewed.events.count()
    assert AuditEntry.objects.filter(action="session.export", target_id=reviewed.id).exists()

    from asgiref.sync import async_to_sync

    # Call ids renumbered fc-1… in order, as ADK's fixtures are when rebuilt; the harness maps them by position.
    events = exported["events"]
    trace = ExportedTrace(path=None, events=[events[0], *_renumber(events[1:])], mocks={})
    events, model = async_to_sync(_replay)(trace)
    assert_matches(trace, events)
    assert model.calls == len(model.responses)


def test_the_export_needs_view_permission(client, manager, reviewed):
    client.force_login(manager)  # a reviewer, not staff
    response = client.get(f"{SESSIONS}{reviewed.id}/export/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def _admin_urls():
    for model in admin.site._registry:
        yield model, f"/admin/{model._meta.app_label}/{model._meta.model_name}/"


def test_the_auditor_may_add_change_or_delete_nothing(client, auditor, reviewed):
    client.force_login(auditor)
    for model, base in _admin_urls():
        assert client.get(f"{base}add/").status_code == 403, base
        row = model._default_manager.first()
        if row is None:
            continue
        assert client.post(f"{base}{row.pk}/change/", {}).status_code == 403, base
        assert client.post(f"{base}{row.pk}/delete/", {"post": "yes"}).status_code == 403, base
