"""API clients: made in the admin (token shown once, stored hashed), revoked there, and the demo client."""

from __future__ import annotations

import io
import re

from django.core.management import call_command

from reviewconsole.api.models import ApiClient, hash_token
from reviewconsole.audit.models import AuditEntry
from tests.api.conftest import auth


def test_the_admin_shows_a_new_token_once_and_keeps_only_its_hash(client, django_user_model, demo):
    root = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-1234")
    client.force_login(root)
    response = client.post("/admin/api/apiclient/add/", {"name": "crm", "workflows": ["email-review"]})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    shown = response.content.decode()  # the answer to the save shows it, in its body only
    token = re.search(r"rc_[\w-]{43}", shown).group(0)
    assert token not in str(response.cookies) and token not in str(client.cookies)  # never a `messages` cookie
    assert token not in client.get("/admin/api/apiclient/").content.decode()
    crm = ApiClient.objects.get(name="crm")
    assert crm.token_hash == hash_token(token)
    assert token not in str(ApiClient.objects.filter(name="crm").values().get())
    assert crm.workflows == ["email-review"]
    page = client.get(f"/admin/api/apiclient/{crm.pk}/change/")
    assert token.encode() not in page.content
    assert client.get("/api/v1/interrupts", headers=auth(token)).status_code == 200


def test_an_admin_revokes_a_token(client, django_user_model, demo):
    root = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-1234")
    token = ApiClient.new_token()
    crm = ApiClient(name="crm", workflows=["*"])
    crm.set_token(token)
    crm.save()
    client.force_login(root)
    client.post("/admin/api/apiclient/", {"action": "revoke", "_selected_action": [crm.pk]})
    crm.refresh_from_db()
    assert crm.revoked_at is not None
    assert client.get("/api/v1/interrupts", headers=auth(token)).status_code == 401
    assert AuditEntry.objects.filter(action="token.revoke", target_id=str(crm.pk)).exists()


def test_demo_makes_a_client_for_every_workflow_with_the_demo_token(db, monkeypatch, client):
    monkeypatch.setenv("DEMO_PASSWORD", "test-pass-1234")
    monkeypatch.setenv("DEMO_API_TOKEN", "rc_demo_token_for_the_tests_0000000000000000")
    out = io.StringIO()
    call_command("demo", stdout=out)
    call_command("demo", stdout=io.StringIO())  # idempotent
    demo_client = ApiClient.objects.get(name="demo")
    assert demo_client.workflows == ["*"]
    assert "DEMO_API_TOKEN" in out.getvalue()
    response = client.get("/api/v1/interrupts", headers=auth("rc_demo_token_for_the_tests_0000000000000000"))
    assert response.status_code == 200


def test_the_admin_shows_a_new_clients_webhook_secret_once_and_its_queues(client, django_user_model, demo):
    root = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-1234")
    client.force_login(root)
    form = {"name": "agent", "workflows": ["*"], "queues": ["support", "finance"]}
    response = client.post("/admin/api/apiclient/add/", form)
    assert response.status_code == 200, response.content.decode()[:2000]
    agent = ApiClient.objects.get(name="agent")
    assert agent.queues == ["support", "finance"]
    assert agent.webhook_secret.startswith("whsec_")
    assert agent.webhook_secret in response.content.decode()
    assert agent.webhook_secret not in str(response.cookies) and agent.webhook_secret not in str(client.cookies)
    assert agent.webhook_secret not in client.get(f"/admin/api/apiclient/{agent.pk}/change/").content.decode()
    assert agent.webhook_secret not in client.get("/admin/api/apiclient/").content.decode()
    other, _ = ApiClient.objects.get_or_create(name="other", defaults={"token_hash": "x" * 64})
    assert other.webhook_secret != agent.webhook_secret


def test_an_admin_replaces_a_clients_webhook_secret_and_sees_the_new_one_once(client, django_user_model, demo):
    # The demo client's secret (made by manage.py demo) was never shown anywhere: its callbacks
    # could not be verified.
    root = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-1234")
    demo_client, _ = ApiClient.objects.get_or_create(name="demo", defaults={"token_hash": "d" * 64})
    old = demo_client.webhook_secret
    client.force_login(root)
    response = client.post(
        "/admin/api/apiclient/", {"action": "replace_webhook_secret", "_selected_action": [demo_client.pk]}
    )
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    demo_client.refresh_from_db()
    assert demo_client.webhook_secret.startswith("whsec_") and demo_client.webhook_secret != old
    assert demo_client.webhook_secret in response.content.decode()
    assert demo_client.webhook_secret not in str(client.cookies)
    assert demo_client.webhook_secret not in client.get("/admin/api/apiclient/").content.decode()
    assert AuditEntry.objects.filter(action="token.webhook_secret_replace", target_id=str(demo_client.pk)).exists()
    other, _ = ApiClient.objects.get_or_create(name="other", defaults={"token_hash": "o" * 64})
    both = client.post(
        "/admin/api/apiclient/", {"action": "replace_webhook_secret", "_selected_action": [demo_client.pk, other.pk]}
    )
    assert both.status_code == 302  # one at a time: refused, nothing replaced
    assert ApiClient.objects.get(pk=demo_client.pk).webhook_secret == demo_client.webhook_secret


def test_a_clients_last_use_is_written_once_a_minute_not_on_every_call(db, rf):
    import datetime as dt

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from reviewconsole.api.auth import LAST_USED_EVERY, client_for_request

    token = ApiClient.new_token()
    crm = ApiClient(name="crm", workflows=["*"])
    crm.set_token(token)
    crm.save()
    request = rf.post("/agui/email-review/", headers=auth(token))
    assert client_for_request(request).pk == crm.pk
    first = ApiClient.objects.get(pk=crm.pk).last_used_at
    assert first is not None  # never used before: written
    with CaptureQueriesContext(connection) as queries:
        assert client_for_request(request).pk == crm.pk
    assert [q["sql"].split()[0] for q in queries] == ["SELECT"]  # within the minute: no write
    assert ApiClient.objects.get(pk=crm.pk).last_used_at == first
    earlier = timezone.now() - dt.timedelta(seconds=LAST_USED_EVERY + 1)
    ApiClient.objects.filter(pk=crm.pk).update(last_used_at=earlier)
    assert client_for_request(request).pk == crm.pk
    assert ApiClient.objects.get(pk=crm.pk).last_used_at > earlier  # over a minute old: written again
