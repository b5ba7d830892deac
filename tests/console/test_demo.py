"""``manage.py demo``: users, queues and webhook endpoints, safe to run again."""

from __future__ import annotations

import io
import re
import stat

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from reviewconsole.hooks.models import WebhookEndpoint, WebhookSecret
from reviewconsole.inbox.items.selectors import queues_for
from reviewconsole.inbox.models import Queue
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflows import all_specs
from reviewconsole.workflows import get as get_workflow
from tests.conftest import DEMO_PASSWORD, DEMO_SECRET, post_webhook


def _counts():
    return (
        User.objects.count(),
        Group.objects.count(),
        Queue.objects.count(),
        WebhookEndpoint.objects.count(),
        WebhookSecret.objects.count(),
    )


def test_it_creates_the_demo_and_is_idempotent(demo, monkeypatch):
    before = _counts()
    call_command("demo", stdout=io.StringIO())
    assert _counts() == before
    manager = authenticate(username="manager", password=DEMO_PASSWORD)
    auditor = authenticate(username="auditor", password=DEMO_PASSWORD)
    assert manager is not None and auditor is not None
    assert (manager.is_staff, manager.is_superuser) == (False, False)
    assert (auditor.is_staff, auditor.is_superuser) == (True, False)
    assert "support" in {q.slug for q in queues_for(manager)}
    assert list(queues_for(auditor)) == []
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    assert (endpoint.workflow, endpoint.enabled) == ("email-review", True)
    assert list(endpoint.secrets.values_list("secret", flat=True)) == [DEMO_SECRET]


def test_the_auditor_may_only_view(auditor):
    perms = auditor.get_all_permissions()
    assert "workflow_sessions.view_workflowsession" in perms
    assert "inbox.view_item" in perms
    assert all(p.split(".")[1].startswith("view_") for p in perms)
    assert "hooks.view_webhooksecret" not in perms


def _demo_output() -> str:
    out = io.StringIO()
    call_command("demo", stdout=out)
    return out.getvalue()


def _printed_password(output: str) -> str:
    return re.search(r"Password for all of them: (\S+)", output).group(1)


def _hashes() -> dict[str, str]:
    names = ["manager", "reviewer", "auditor", "admin"]
    return dict(User.objects.filter(username__in=names).values_list("username", "password"))


@pytest.fixture
def no_demo_env(db, monkeypatch, settings, tmp_path):
    """No DEMO_PASSWORD nor DEMO_WEBHOOK_SECRET, and a var dir of the test's own."""
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    monkeypatch.delenv("DEMO_WEBHOOK_SECRET", raising=False)
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_it_generates_and_prints_a_password_when_none_is_set(no_demo_env):
    output = _demo_output()
    password = _printed_password(output)
    assert authenticate(username="manager", password=password) is not None
    secret = WebhookSecret.objects.get(endpoint__slug="email-review").secret
    assert secret.startswith("whsec_")
    assert secret not in output


def test_the_generated_password_is_kept_in_the_var_dir_and_reused(no_demo_env):
    first = _printed_password(_demo_output())
    kept = no_demo_env / "demo_password"
    assert kept.read_text(encoding="utf-8").strip() == first
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    hashes = _hashes()
    second_output = _demo_output()
    assert _printed_password(second_output) == first
    assert str(kept) in second_output
    assert _hashes() == hashes  # not set again: the same hash, so sessions survive


def test_a_restart_keeps_people_logged_in(no_demo_env, client):
    password = _printed_password(_demo_output())
    assert client.login(username="manager", password=password)
    assert client.get("/inbox/").status_code == 200
    _demo_output()  # ./run again
    assert client.get("/inbox/").status_code == 200


def test_demo_password_is_printed_and_only_set_when_it_changed(no_demo_env, monkeypatch, client):
    monkeypatch.setenv("DEMO_PASSWORD", "first-choice-123")
    output = _demo_output()
    assert "$DEMO_PASSWORD" not in output
    assert _printed_password(output) == "first-choice-123"
    assert not (no_demo_env / "demo_password").exists()
    assert client.login(username="reviewer", password="first-choice-123")
    hashes = _hashes()
    _demo_output()
    assert _hashes() == hashes
    assert client.get("/inbox/").status_code == 200
    monkeypatch.setenv("DEMO_PASSWORD", "second-choice-456")
    assert _printed_password(_demo_output()) == "second-choice-456"
    assert all(hashes[name] != new for name, new in _hashes().items())
    assert authenticate(username="auditor", password="second-choice-456") is not None
    assert client.get("/inbox/").status_code == 302  # a new password ends the old sessions


def test_a_new_webhook_secret_replaces_the_old_demo_secret(demo, monkeypatch):
    monkeypatch.setenv("DEMO_WEBHOOK_SECRET", "whsec_" + "Q" * 43 + "=")
    call_command("demo", stdout=io.StringIO())
    secrets = WebhookSecret.objects.filter(endpoint__slug="email-review").values_list("secret", flat=True)
    assert list(secrets) == ["whsec_" + "Q" * 43 + "="]


def test_it_creates_an_admin_with_the_demo_password(no_demo_env, client):
    output = _demo_output()
    password = _printed_password(output)
    assert re.search(r"^  Admin: +admin ", output, re.MULTILINE)
    admin = authenticate(username="admin", password=password)
    assert admin is not None
    assert (admin.is_staff, admin.is_superuser, admin.is_active) == (True, True, True)
    assert client.login(username="admin", password=password)
    # The README's admin steps: add an API client, a subscription, a webhook endpoint's secrets.
    for url in ("/admin/api/apiclient/add/", "/admin/outbound/subscription/add/", "/admin/hooks/webhookendpoint/"):
        assert client.get(url).status_code == 200, url
    hashes = _hashes()
    assert set(hashes) == {"manager", "reviewer", "auditor", "admin"}
    _demo_output()
    assert _hashes() == hashes


def test_a_chat_workflow_gets_no_webhook_endpoint(demo, client):
    """support-handoff waits for the user's next chat message, which a webhook cannot send: the
    demo makes no endpoint for it (AG-UI drives it), and a webhook to it is refused."""
    assert get_workflow("support-handoff").chat
    slugs = set(WebhookEndpoint.objects.values_list("slug", flat=True))
    assert "support-handoff" not in slugs
    assert slugs == {spec.name for spec in all_specs() if not spec.chat}
    response = post_webhook(client, {"message": "hello"}, slug="support-handoff")
    assert response.status_code == 404
    assert WorkflowSession.objects.count() == 0


def test_an_older_demo_s_chat_endpoint_is_disabled_and_not_printed(no_demo_env):
    WebhookEndpoint.objects.create(slug="support-handoff", workflow="support-handoff")
    output = _demo_output()
    assert not WebhookEndpoint.objects.get(slug="support-handoff").enabled
    assert "/hooks/support-handoff/" not in output
    assert "/hooks/email-review/" in output
    assert "POST /agui/support-handoff/" in output
