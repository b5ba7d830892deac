"""Admin changes are audited with who, where from and the row before and after; secrets are masked."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks.models import WebhookEndpoint


@pytest.fixture
def admin_user(django_user_model, demo):
    return django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-1234")


def test_a_change_in_the_admin_is_audited_with_before_and_after(client, admin_user):
    client.force_login(admin_user)
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    url = f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/"
    secret = endpoint.secrets.get()
    form = {
        "slug": "email-review",
        "workflow": "email-review",
        "enabled": "",
        "description": "paused for maintenance",
        "input_mapping": "{}",
        "rate_limit": "",
        "secrets-TOTAL_FORMS": "1",
        "secrets-INITIAL_FORMS": "1",
        "secrets-MIN_NUM_FORMS": "0",
        "secrets-MAX_NUM_FORMS": "1000",
        "secrets-0-id": secret.pk,
        "secrets-0-endpoint": endpoint.pk,
        "secrets-0-label": secret.label,
        "secrets-0-secret": secret.secret,
    }
    response = client.post(url, form, REMOTE_ADDR="192.0.2.44", HTTP_USER_AGENT="admin-browser")
    assert response.status_code == 302, response.content.decode()[:2000]
    entry = AuditEntry.objects.get(action="admin.change", target_type="hooks.webhookendpoint")
    assert (entry.actor, entry.ip, entry.user_agent) == ("user:root", "192.0.2.44", "admin-browser")
    assert entry.target_id == str(endpoint.pk)
    assert entry.before["enabled"] is True
    assert entry.after["enabled"] is False
    assert entry.after["description"] == "paused for maintenance"


def test_deleting_in_the_admin_keeps_the_row_before_with_secrets_masked(client, admin_user):
    from reviewconsole.api.models import ApiClient

    client.force_login(admin_user)
    demo_client = ApiClient.objects.get(name="demo")
    response = client.post(f"/admin/api/apiclient/{demo_client.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not ApiClient.objects.filter(name="demo").exists()
    entry = AuditEntry.objects.get(action="admin.delete", target_type="api.apiclient")
    assert entry.before["name"] == "demo"
    assert entry.before["token_hash"] == "***"
    assert entry.before["webhook_secret"] == "***"
    assert entry.after is None


def test_adding_a_user_is_audited_without_the_password(client, admin_user):
    client.force_login(admin_user)
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "newbie",
            "password1": "a-long-pass-phrase-42",
            "password2": "a-long-pass-phrase-42",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    entry = AuditEntry.objects.get(action="admin.add", target_type="auth.user")
    assert entry.after["username"] == "newbie"
    assert entry.after["password"] == "***"
    assert "a-long-pass-phrase-42" not in str(entry.after)
