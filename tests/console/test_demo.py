"""``manage.py demo``: users, queues and webhook endpoints, safe to run again."""

from __future__ import annotations

import io
import re

from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from reviewconsole.hooks.models import WebhookEndpoint, WebhookSecret
from reviewconsole.inbox.models import Queue
from reviewconsole.inbox.selectors import queues_for
from tests.conftest import DEMO_PASSWORD, DEMO_SECRET


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
    assert "inbox.view_interrupt" in perms
    assert all(p.split(".")[1].startswith("view_") for p in perms)
    assert "hooks.view_webhooksecret" not in perms


def test_it_generates_and_prints_a_password_when_none_is_set(db, monkeypatch):
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    monkeypatch.delenv("DEMO_WEBHOOK_SECRET", raising=False)
    out = io.StringIO()
    call_command("demo", stdout=out)
    password = re.search(r"Password for both: (\S+)", out.getvalue()).group(1)
    assert authenticate(username="manager", password=password) is not None
    secret = WebhookSecret.objects.get(endpoint__slug="email-review").secret
    assert secret.startswith("whsec_")
    assert secret not in out.getvalue()


def test_a_new_webhook_secret_replaces_the_old_demo_secret(demo, monkeypatch):
    monkeypatch.setenv("DEMO_WEBHOOK_SECRET", "whsec_" + "Q" * 43 + "=")
    call_command("demo", stdout=io.StringIO())
    secrets = WebhookSecret.objects.filter(endpoint__slug="email-review").values_list("secret", flat=True)
    assert list(secrets) == ["whsec_" + "Q" * 43 + "="]
