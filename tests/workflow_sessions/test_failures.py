"""A failed session as people see it: a generic sentence with its error code (a model failure's
own message), never the exception's text, on every page and in every JSON answer; the exception
stays in the server log (and the superuser's admin). Uses ``tests/workflow_sessions/fragile.py``."""

from __future__ import annotations

import logging

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.failure import failure_message
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.services import session_retry, session_start
from tests.workflow_sessions import fragile

GENERIC = "A step of the workflow raised an error"


@pytest.fixture
def fragile_on(settings, demo, monkeypatch):
    """The fragile workflows registered next to the demo's; their model fails until told otherwise."""
    modules = settings.REVIEWCONSOLE.get("WORKFLOWS", ["reviewconsole.demo"])
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WORKFLOWS": [*modules, "tests.workflow_sessions.fragile"]}
    monkeypatch.setitem(fragile.FAILING, "on", True)
    return fragile.FAILING


@pytest.fixture
def fail(fragile_on, on_commit, personas):
    def start(workflow="fragile-parallel", user_id=None):
        with on_commit():
            session = session_start(workflow=workflow, data={"topic": "x"}, user_id=user_id or "test")
        session.refresh_from_db()
        assert session.status == "failed"
        return session

    return start


def test_the_exception_text_is_shown_nowhere_but_the_log(client, fail, personas, caplog, on_commit):
    caplog.set_level(logging.ERROR)
    session = fail(user_id=f"console:{personas.admin.pk}")
    assert fragile.SECRET in str(session.error)  # stored, for the server's operators
    assert fragile.SECRET in caplog.text  # and logged with its traceback
    [item] = Item.objects.filter(session=session)
    pages = {}
    client.force_login(personas.reviewer)  # a plain reviewer of the queue
    pages["inbox"] = client.get("/inbox/?status=cancelled").content.decode()
    pages["item"] = client.get(f"/inbox/items/{item.pk}/").content.decode()
    pages["item json"] = client.get(f"/inbox/items/{item.pk}/status.json").content.decode()
    client.force_login(personas.admin)
    pages["session"] = client.get(f"/sessions/{session.pk}/").content.decode()
    pages["session json"] = client.get(f"/sessions/{session.pk}/status.json").content.decode()
    client.force_login(personas.auditor)
    pages["admin"] = client.get(f"/admin/workflow_sessions/workflowsession/{session.pk}/change/").content.decode()
    pages["api"] = client.get(f"/api/sessions/{session.pk}/").content.decode()
    for name, text in pages.items():
        assert fragile.SECRET not in text, name
    for name in ("inbox", "item", "session", "admin"):
        assert GENERIC in pages[name] and "Error code: node_failed." in pages[name], name
    assert 'id="failed-sessions"' in pages["inbox"]

    fragile.FAILING["on"] = False
    with on_commit():
        session_retry(session=session, user=personas.queue_manager)
    [entry] = AuditEntry.objects.filter(action="session.retry")
    assert fragile.SECRET not in str(entry.detail)
    assert entry.detail == {"error_code": "node_failed", "message": failure_message(session.error)}


def test_only_a_superuser_sees_the_stored_error_in_the_admin(client, fail, personas):
    session = fail()
    url = f"/admin/workflow_sessions/workflowsession/{session.pk}/change/"
    client.force_login(personas.admin)
    assert fragile.SECRET in client.get(url).content.decode()


def test_a_model_failure_keeps_its_own_message():
    error = {
        "code": "node_failed",
        "message": "Node wf@1/writer@1 failed: The model m gave no usable answer after 3 attempts: it timed out.",
        "node_path": "wf@1/writer@1",
        "cause": {
            "code": "model_error",
            "message": "The model m gave no usable answer after 3 attempts: it timed out.",
        },
        "exception": "NodeFailedError('… sk-x')",
    }
    assert failure_message(error) == (
        "The model m gave no usable answer after 3 attempts: it timed out. (node wf@1/writer@1) "
        "Error code: model_error."
    )
    assert failure_message({"code": "node_failed", "message": "Node a failed: sk-x"}) == (
        "A step of the workflow raised an error. Error code: node_failed. The details are in the server log."
    )


def test_the_admin_offers_retry_only_to_those_who_may_retry(client, fail, personas):
    fail()
    url = "/admin/workflow_sessions/workflowsession/"
    client.force_login(personas.auditor)
    assert 'value="retry_sessions"' not in client.get(url).content.decode()
    client.force_login(personas.admin)
    assert 'value="retry_sessions"' in client.get(url).content.decode()


# -- "Sessions that failed": newest first, filtered in the database; failures without an item ---


def _old_failures(count, queue_slug):
    """``count`` failed sessions a day old, each with a cancelled item in ``queue_slug``."""
    import datetime as dt

    from django.utils import timezone

    from reviewconsole.inbox.models import Queue

    queue = Queue.objects.get(slug=queue_slug)
    sessions = WorkflowSession.objects.bulk_create(
        WorkflowSession(workflow="email-review", user_id="old", title=f"old {n}", status="failed") for n in range(count)
    )
    Item.objects.bulk_create(
        Item(session=s, interrupt_id="i", kind="input", queue=queue, status="cancelled") for s in sessions
    )
    day_ago = timezone.now() - dt.timedelta(days=1)
    WorkflowSession.objects.filter(pk__in=[s.pk for s in sessions]).update(updated_at=day_ago)


def test_the_newest_failure_is_listed_after_hundreds_of_older_ones(client, fail, personas):
    _old_failures(501, "support")
    newest = fail()
    client.force_login(personas.reviewer)
    listed = client.get("/inbox/").context["failed"]
    assert listed[0]["session"].pk == newest.pk
    assert len(listed) == 20


def test_failures_are_filtered_by_the_users_queues(client, fail, personas):
    _old_failures(3, "finance")
    client.force_login(personas.reviewer)
    assert client.get("/inbox/").context.get("failed") == []


def test_a_session_that_failed_before_its_first_request_is_retried_by_a_manager(client, fail, personas, on_commit):
    session = fail("fragile-start", user_id=f"user:{personas.reviewer.get_username()}")
    assert not Item.objects.filter(session=session).exists()
    client.force_login(personas.queue_manager)
    inbox = client.get("/inbox/").content.decode()
    assert f'href="/sessions/{session.pk}/"' in inbox
    page = client.get(f"/sessions/{session.pk}/").content.decode()
    assert 'id="retry"' in page and GENERIC in page

    client.force_login(personas.other_reviewer)  # neither its starter nor a manager
    assert client.get(f"/sessions/{session.pk}/").status_code == 404
    assert client.post(f"/sessions/{session.pk}/retry/").status_code == 404
    client.force_login(personas.reviewer)  # started it, but manages no queue
    assert f'href="/sessions/{session.pk}/"' not in client.get("/inbox/").content.decode()
    assert 'id="retry"' not in client.get(f"/sessions/{session.pk}/").content.decode()
    assert client.post(f"/sessions/{session.pk}/retry/").status_code == 403
    session.refresh_from_db()
    assert session.status == "failed"

    fragile.FAILING["on"] = False
    client.force_login(personas.queue_manager)
    with on_commit():
        response = client.post(f"/sessions/{session.pk}/retry/")
    assert response.status_code == 302 and response["Location"] == f"/sessions/{session.pk}/"
    session.refresh_from_db()
    assert session.status == "waiting"
    [item] = Item.objects.filter(session=session, status="pending")
    assert client.get(f"/sessions/{session.pk}/")["Location"] == f"/inbox/items/{item.pk}/"
    assert AuditEntry.objects.filter(action="session.retry", target_id=session.pk).count() == 1
    assert client.post(f"/sessions/{session.pk}/retry/").status_code == 409  # not failed any more


def test_the_failed_sessions_query_walks_indexes(fail, personas):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reviewconsole.inbox.pages.failed import failed_sessions

    _old_failures(50, "support")

    with CaptureQueriesContext(connection) as captured:
        failed_sessions([1, 2], ["email-review"])
    [sql] = [q["sql"] for q in captured.captured_queries if "workflow_sessions_workflowsession" in q["sql"]][:1]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        plan = [row[-1] for row in cursor.fetchall()]
    assert any("USING INDEX session_status_updated" in line for line in plan), plan
    assert not any("TEMP B-TREE" in line for line in plan), plan
    for line in plan:
        if "inbox_item" in line:
            assert "USING INDEX" in line or "USING COVERING INDEX" in line, plan


# -- an item the failure cancelled, after Retry ---------------------------------------------


def test_an_item_the_failure_cancelled_says_so_and_links_the_one_a_retry_asks(client, fail, personas, on_commit):
    session = fail("fragile-parallel")
    [old] = Item.objects.filter(session=session)
    assert old.status == "cancelled"
    client.force_login(personas.queue_manager)
    page = client.get(f"/inbox/items/{old.pk}/").content.decode()
    assert "before this request was answered" in page and "moved on without it" not in page
    assert 'data-state="failed"' in page and 'id="retried"' not in page

    fragile.FAILING["on"] = False
    with on_commit():
        answer = client.post(f"/inbox/items/{old.pk}/retry/", headers={"Accept": "application/json"}).json()
    [new] = Item.objects.filter(session=session, status="pending")
    assert new.interrupt_id == old.interrupt_id and new.pk != old.pk
    assert answer["item"]["id"] == new.pk and answer["retried_from"] == old.pk
    page = client.get(f"/inbox/items/{old.pk}/").content.decode()
    assert 'id="retried-request">' in page and f'href="/inbox/items/{new.pk}/" id="retried-request"' in page
    refused = client.post(f"/inbox/items/{old.pk}/decide/", {"action": "answer", "f": "fine"})
    assert refused.status_code == 409
    assert "The session failed" in refused.context["conflict"] and refused.context["newer_url"].endswith(f"/{new.pk}/")


def test_a_retry_from_the_page_lands_on_the_new_item(client, fail, personas, on_commit):
    session = fail("fragile-parallel")
    [old] = Item.objects.filter(session=session)
    fragile.FAILING["on"] = False
    client.force_login(personas.queue_manager)
    with on_commit():
        response = client.post(f"/inbox/items/{old.pk}/retry/")
    [new] = Item.objects.filter(session=session, status="pending")
    assert response["Location"] == f"/inbox/items/{new.pk}/"
