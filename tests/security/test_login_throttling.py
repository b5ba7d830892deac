"""Login throttling (django-axes): repeated failures lock the username out from that address."""

from __future__ import annotations

from reviewconsole.audit.models import AuditEntry


def _login(client, password):
    return client.post("/accounts/login/", {"username": "manager", "password": password}, REMOTE_ADDR="203.0.113.9")


def test_five_failures_lock_the_login_even_for_the_right_password(client, demo):
    for _ in range(4):
        assert _login(client, "wrong").status_code == 200  # the form again, with an error
    assert _login(client, "wrong").status_code == 429
    response = _login(client, demo["password"])
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    failed = AuditEntry.objects.filter(action="login.failed")
    assert failed.count() >= 5
    entry = failed.first()
    assert (entry.actor, entry.ip) == ("anonymous:manager", "203.0.113.9")
    assert "wrong" not in str(entry.detail)


def test_another_address_is_not_locked_out(client, demo):
    for _ in range(5):
        _login(client, "wrong")
    response = client.post("/accounts/login/", {"username": "manager", "password": demo["password"]})
    assert response.status_code == 302


def test_a_login_is_audited_with_address_and_user_agent(client, demo):
    client.post(
        "/accounts/login/",
        {"username": "manager", "password": demo["password"]},
        REMOTE_ADDR="198.51.100.7",
        HTTP_USER_AGENT="audit-test/1.0",
    )
    entry = AuditEntry.objects.get(action="login")
    assert (entry.actor, entry.ip, entry.user_agent) == ("user:manager", "198.51.100.7", "audit-test/1.0")
