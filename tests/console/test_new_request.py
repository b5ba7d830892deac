"""New request: the workflows a user may start, their generated input forms, the start through
``session_start`` (audited ``session.start``), and the page that follows the new session."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, DEMO_PASSWORD, post_webhook


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _post(client: Client, path: str, data: dict):
    """POST ``data`` as the form at ``path`` sends it: with the start_token its GET gave."""
    form = client.get(path)
    token = form.context["start_token"] if form.status_code == 200 else ""
    return client.post(path, {**data, "start_token": token})


@pytest.fixture
def starter(demo):
    """A user with the permission to start email reviews, and no queue (so no item to open)."""
    user = get_user_model().objects.create_user("starter", password=DEMO_PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="start_email-review"))
    return user


def test_a_manager_is_offered_every_workflow_of_the_queues_they_manage_but_no_chat(manager):
    page = _client(manager).get("/new/")
    assert page.status_code == 200
    offered = [spec.name for spec in page.context["specs"]]
    titles = [spec.title.lower() for spec in page.context["specs"]]
    assert titles == sorted(titles)
    assert set(offered) == {"email-review", "vip-discount", "refund-approval", "incident-triage"}
    assert b'href="/new/email-review/"' in page.content


def test_the_inbox_links_to_new_request_for_those_who_may_start(manager, personas):
    assert b'id="new-request"' in _client(manager).get("/inbox/").content
    assert b'id="new-request"' not in _client(personas.reviewer).get("/inbox/").content


def test_a_reviewer_who_manages_no_queue_may_start_nothing(personas, on_commit):
    client = _client(personas.reviewer)
    page = client.get("/new/")
    assert page.status_code == 200 and page.context["specs"] == []
    assert client.get("/new/email-review/").status_code == 404
    with on_commit():
        refused = _post(client, "/new/email-review/", {"f.complaint": COMPLAINT})
    assert refused.status_code == 404
    assert not WorkflowSession.objects.exists()


def test_a_permission_per_workflow_lets_a_user_start_it(starter):
    offered = [s.name for s in _client(starter).get("/new/").context["specs"]]
    assert offered == ["email-review"]
    assert _client(starter).get("/new/vip-discount/").status_code == 404


def test_the_form_is_generated_from_the_input_schema(manager):
    page = _client(manager).get("/new/incident-triage/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="f.title"' in html and 'name="f.details"' in html
    assert 'name="csrfmiddlewaretoken"' in html


@pytest.mark.parametrize("value", ["", "   "])
def test_a_missing_field_is_shown_and_nothing_is_stored(manager, on_commit, value):
    with on_commit():
        page = _post(_client(manager), "/new/email-review/", {"f.complaint": value})
    assert page.status_code == 400
    assert "This field is required." in page.content.decode() or "at least 1 character" in page.content.decode()
    assert 'aria-invalid="true"' in page.content.decode()
    assert not WorkflowSession.objects.exists()
    assert not AuditEntry.objects.filter(action="session.start").exists()


def test_a_nul_character_is_refused_and_nothing_is_stored(manager, on_commit):
    with on_commit():
        page = _post(_client(manager), "/new/email-review/", {"f.complaint": "bad\x00text"})
    assert page.status_code == 400
    assert "NUL character" in page.content.decode()
    assert not WorkflowSession.objects.exists()


def test_a_number_out_of_the_schemas_range_is_shown_on_its_field(manager, on_commit):
    with on_commit():
        data = {"f.order_id": "A-1", "f.amount": "abc", "f.reason": "x"}
        page = _post(_client(manager), "/new/refund-approval/", data)
    assert page.status_code == 400
    assert "Enter a number." in page.content.decode()
    assert not WorkflowSession.objects.exists()


def test_a_start_goes_through_session_start_is_audited_and_lands_on_the_item(manager, on_commit):
    client = _client(manager)
    with on_commit():
        started = _post(client, "/new/email-review/", {"f.complaint": COMPLAINT})
    session = WorkflowSession.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/sessions/{session.id}/"
    assert session.user_id == "user:manager" and session.metadata["door"] == "console"
    assert session.title == COMPLAINT
    entry = AuditEntry.objects.get(action="session.start")
    assert entry.actor_user == manager and entry.target_id == session.id
    assert entry.detail == {"workflow": "email-review", "door": "console"}
    item = Item.objects.get(session=session, status="pending")
    follow = client.get(started["Location"])
    assert follow.status_code == 302 and follow["Location"] == f"/inbox/items/{item.pk}/"
    status = client.get(f"/sessions/{session.id}/status.json").json()
    assert status["item_url"] == f"/inbox/items/{item.pk}/"
    assert status["session"]["status"] == "waiting"


def test_a_session_that_ends_at_once_shows_its_result(manager, on_commit):
    with on_commit():
        started = _post(_client(manager), "/new/vip-discount/", {"f.customer_id": "c456"})
    page = _client(manager).get(started["Location"])
    assert page.status_code == 200
    assert page.context["follow"]["session"]["status"] == "completed"
    assert "5% off" in page.content.decode()


def test_a_session_waiting_in_a_queue_the_user_cannot_see_says_where(starter, on_commit):
    client = _client(starter)
    with on_commit():
        started = _post(client, "/new/email-review/", {"f.complaint": "<script>alert(1)</script>"})
    page = client.get(started["Location"])
    html = page.content.decode()
    assert page.status_code == 200 and "It waits for a reviewer in Support." in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    status = client.get(started["Location"] + "status.json").json()
    assert status["item_url"] is None and status["waiting_in"] == ["Support"]


def test_only_who_started_a_session_or_manages_its_queue_follows_it(manager, personas, on_commit, client):
    with on_commit():
        started = _post(_client(manager), "/new/email-review/", {"f.complaint": COMPLAINT})
    assert _client(personas.reviewer).get(started["Location"]).status_code == 404  # reviews, does not manage
    assert _client(personas.reviewer).get(started["Location"] + "status.json").status_code == 404
    assert _client(personas.queue_manager).get(started["Location"] + "status.json").status_code == 200
    with on_commit():
        hooked = post_webhook(client, {"complaint": COMPLAINT}).json()["session_id"]
    assert _client(personas.reviewer).get(f"/sessions/{hooked}/").status_code == 404
    assert _client(manager).get(f"/sessions/{hooked}/").status_code == 302  # manages support: to its item
    assert _client(manager).get("/sessions/nope/").status_code == 404


def test_the_form_needs_its_csrf_token(manager):
    client = Client(enforce_csrf_checks=True)
    client.force_login(manager)
    assert _post(client, "/new/email-review/", {"f.complaint": COMPLAINT}).status_code == 403
    assert not WorkflowSession.objects.exists()


def test_a_refused_form_shows_the_posted_text_escaped(manager):
    data = {"f.order_id": '"><b>x</b>', "f.amount": "", "f.reason": ""}
    page = _post(_client(manager), "/new/refund-approval/", data)
    assert page.status_code == 400
    html = page.content.decode()
    assert '"><b>x</b>' not in html and "&quot;&gt;&lt;b&gt;x&lt;/b&gt;" in html


def test_what_a_user_may_start_costs_a_few_queries_whatever_the_number_of_workflows(
    manager, starter, django_assert_max_num_queries
):
    from reviewconsole.console.starts import startable_specs

    for user in (manager, starter):
        user = get_user_model().objects.get(pk=user.pk)  # no permission cache
        with django_assert_max_num_queries(3):
            assert startable_specs(user)
