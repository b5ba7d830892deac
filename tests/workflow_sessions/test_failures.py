"""A failed session as people see it: a generic sentence with its error code (a model failure's
own message), never the exception's text, on every page and in every JSON answer; the exception
stays in the server log (and the superuser's admin). Uses ``tests/workflow_sessions/fragile.py``."""

from __future__ import annotations

import logging

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Interrupt
from reviewconsole.workflow_sessions.failure import failure_message
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
    [item] = Interrupt.objects.filter(session=session)
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
