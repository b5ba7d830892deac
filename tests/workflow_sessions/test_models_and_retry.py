"""Models per workflow and per agent (REVIEWCONSOLE["MODELS"]), their checks, a model failure as
the inbox, the item page and the admin show it (never the key), and Retry of the failed session."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.test import override_settings

from engine import RetryingModel
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.permissions import require_retry_permission
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions import checks, llm
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflows import get
from tests.conftest import post_webhook
from tests.engine.openai_server import FakeOpenAI

KEY = "sk-console-SECRET-9731"
BACKOFF = {"INITIAL": 0.0, "MULTIPLIER": 1.0, "MAX": 0.0, "MAX_RETRY_AFTER": 0.0}


def conf(settings, models, model="llm", **extra):
    return {**settings.REVIEWCONSOLE, "MODEL": model, "MODELS": models, "MODEL_BACKOFF": BACKOFF, **extra}


def openai_entry(url, **extra):
    return {"BACKEND": "openai", "BASE_URL": url, "API_KEY_ENV": "TEST_LLM_KEY", "MODEL": "m", "TIMEOUT": 5, **extra}


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("nope", "must be a dict"),
        ({"BACKEND": "gpt"}, "['BACKEND'] must be one of"),
        ({"BACKEND": "openai", "MODEL": "m", "TIMEOUT": "soon"}, "must be numbers"),
        ({"BACKEND": "openai"}, "['MODEL'] must name"),
        ({"BACKEND": "openai", "MODEL": "m", "API_KEY_ENV": "sk-live-123"}, "must name an environment variable"),
        ({"BACKEND": "openai", "MODEL": "m", "KEY": "x"}, "unknown keys ['KEY']"),
    ],
)
def test_a_malformed_entry_is_a_system_check_error_naming_it(settings, entry, words):
    settings.REVIEWCONSOLE = conf(settings, {"offline": {"BACKEND": "offline"}, "bad": entry}, model="offline")
    [error] = checks.check_models()
    assert error.id == "reviewconsole.E101"
    assert "REVIEWCONSOLE['MODELS']['bad']" in error.msg and words in error.msg
    with pytest.raises(ImproperlyConfigured):
        llm.model_configs()


@pytest.mark.parametrize("url", ["ftp://ann:hunter2@models.example/v1", "HTTP://ann:hun/ter@2@models.example/v1"])
def test_a_base_url_in_a_message_shows_no_credentials(settings, url):
    settings.REVIEWCONSOLE = conf(settings, {"llm": openai_entry(url)})
    [error] = checks.check_models()
    assert error.id == "reviewconsole.E101" and "['BASE_URL'] must be an http(s) URL" in error.msg
    assert "models.example/v1" in error.msg and "//***@" in error.msg
    assert "ann" not in error.msg and "hun" not in error.msg


def test_a_configured_model_shows_no_credentials_of_its_base_url(settings, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    settings.REVIEWCONSOLE = conf(settings, {"llm": openai_entry("http://ann:hunter2@127.0.0.1:9/v1")})
    model = llm.model_configs()["llm"].build()
    assert "http://***@127.0.0.1:9/v1" in repr(model)
    assert "hunter2" not in repr(model) and "ann" not in repr(model)


def test_an_unknown_default_and_an_unknown_workflow_model_are_errors(settings, monkeypatch):
    settings.REVIEWCONSOLE = conf(settings, {"offline": {"BACKEND": "offline"}}, model="missing")
    assert [e.id for e in checks.check_models()] == ["reviewconsole.E101"]
    settings.REVIEWCONSOLE = conf(settings, {"offline": {"BACKEND": "offline"}}, model="offline")
    spec = dataclasses.replace(get("email-review"), model="big", agent_models={"draft_email": "tiny"})
    monkeypatch.setattr(checks, "all_specs", lambda: [spec])
    messages = [(e.id, e.msg) for e in checks.check_models()]
    assert [m[0] for m in messages] == ["reviewconsole.E102", "reviewconsole.E102"]
    assert "workflow 'email-review' names the model 'big'" in messages[0][1]
    assert "agent 'draft_email' of workflow 'email-review' names the model 'tiny'" in messages[1][1]


def test_the_key_is_read_from_the_named_variable_and_shown_nowhere(settings, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    settings.REVIEWCONSOLE = conf(settings, {"llm": openai_entry("http://127.0.0.1:9/v1")})
    config = llm.model_configs()["llm"]
    assert config.api_key_env == "TEST_LLM_KEY"
    model = llm.built_model("default")
    assert isinstance(model, RetryingModel)
    assert model.model.api_key == KEY
    assert KEY not in repr(config) and KEY not in repr(model) and KEY not in repr(settings.REVIEWCONSOLE)
    assert model.retry.attempts == 3  # RETRIES 2 by default


def test_without_the_variable_no_other_key_is_sent(settings, monkeypatch):
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-server")
    settings.REVIEWCONSOLE = conf(settings, {"llm": openai_entry("http://127.0.0.1:9/v1")})
    assert llm.built_model("llm").model.api_key == "not-needed"


# -- routing ---------------------------------------------------------------------------------


def test_each_workflow_and_agent_gets_its_configured_model(settings, monkeypatch):
    models = {"offline": {"BACKEND": "offline"}, "a": openai_entry("http://a/v1"), "b": openai_entry("http://b/v1")}
    settings.REVIEWCONSOLE = conf(settings, models, model="offline")
    spec = dataclasses.replace(get("support-handoff"), model="a", agent_models={"refunds_agent": "b"})
    monkeypatch.setattr(llm, "get", lambda name: spec if name == spec.name else get(name))
    llm.workflow_model.cache_clear()
    router = llm.workflow_model("support-handoff")
    assert router.for_agent("triage_agent") is llm.built_model("a")
    assert router.for_agent("refunds_agent") is llm.built_model("b")
    assert router.for_agent("refunds_agent").model.base_url == "http://b/v1"
    assert llm.workflow_model("email-review").for_agent("draft_email") is llm.built_model("offline")
    llm.workflow_model.cache_clear()


# -- a model failure, shown, then retried ----------------------------------------------------


@pytest.fixture
def llm_server(settings, monkeypatch, demo):
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    with (
        FakeOpenAI() as server,
        override_settings(REVIEWCONSOLE=conf(settings, {"llm": openai_entry(server.base_url, RETRIES=1)})),
    ):
        yield server


def test_a_failing_model_fails_the_session_visibly_and_a_manager_retries_it(
    client, llm_server, personas, on_commit, caplog
):
    caplog.set_level(logging.DEBUG)
    llm_server.replies.append({"text": "Hello, we are sorry about the battery."})
    with on_commit():
        response = post_webhook(client, {"complaint": "battery"})
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    item = Item.objects.get(session=session, status="pending")
    llm_server.replies.extend([{"status": 503, "error": "overloaded", "echo_authorization": True}] * 2)
    client.force_login(personas.queue_manager)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "revise", "feedback": "shorter"})
    session.refresh_from_db()
    assert session.status == "failed"
    assert len(llm_server.requests) == 3  # the first draft, then the revision tried twice (RETRIES 1)
    assert KEY in llm_server.requests[-1]["headers"]["authorization"]
    message = "gave no usable answer after 2 attempts: the model's server had an error."

    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert message in page.replace("&#x27;", "'")
    assert 'id="retry"' in page
    inbox = client.get("/inbox/?status=resolved").content.decode()
    assert 'id="failed-sessions"' in inbox and message in inbox.replace("&#x27;", "'")
    client.force_login(personas.admin)
    admin_page = client.get(f"/admin/workflow_sessions/workflowsession/{session.pk}/change/").content.decode()
    assert message in admin_page.replace("&#x27;", "'")
    stored = str(session.error) + "".join(str(e.data) for e in session.events.all())
    for text in (page, inbox, admin_page, stored, caplog.text):
        assert KEY not in text

    client.force_login(personas.reviewer)  # a reviewer of the queue, not its manager
    assert 'id="retry"' not in client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert client.post(f"/inbox/items/{item.pk}/retry/").status_code == 403
    session.refresh_from_db()
    assert session.status == "failed"

    llm_server.replies.append({"text": "Hello, sorry about the battery."})
    client.force_login(personas.queue_manager)
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/retry/")
    assert response.status_code == 302
    session.refresh_from_db()
    assert session.status == "waiting"
    assert Item.objects.filter(session=session, status="pending").count() == 1
    [entry] = AuditEntry.objects.filter(action="session.retry")
    assert entry.target_id == session.pk
    assert client.post(f"/inbox/items/{item.pk}/retry/").status_code == 409  # not failed any more


def test_the_admin_action_retries_through_the_service(client, llm_server, personas, on_commit):
    llm_server.replies.extend([{"status": 500, "error": "x"}] * 2)
    with on_commit():
        response = post_webhook(client, {"complaint": "battery"})
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    assert session.status == "failed"
    with pytest.raises(PermissionDenied):
        require_retry_permission(personas.reviewer, session)
    llm_server.replies.append({"text": "Hello."})
    client.force_login(personas.admin)
    with on_commit():
        client.post(
            "/admin/workflow_sessions/workflowsession/",
            {"action": "retry_sessions", "_selected_action": [session.pk]},
        )
    session.refresh_from_db()
    assert session.status == "waiting"
    assert AuditEntry.objects.filter(action="session.retry", target_id=session.pk).count() == 1
