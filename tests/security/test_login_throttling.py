"""Login throttling (django-axes): repeated failures lock the username out from that address.

As README says: 5 failed logins (each answered as one), then the username is locked out from that
address for 15 minutes (429), on the login page's template, saying for how long."""

from __future__ import annotations

import re

from django.test import RequestFactory

from reviewconsole.audit.lockout import REFUSED, lockout_response
from reviewconsole.audit.models import AuditEntry


def _login(client, password):
    return client.post("/accounts/login/", {"username": "manager", "password": password}, REMOTE_ADDR="203.0.113.9")


def test_five_failures_lock_the_login_even_for_the_right_password(client, demo):
    for _ in range(4):
        assert _login(client, "wrong").status_code == 200  # the form again, with an error
    fifth = _login(client, "wrong")  # checked like the others: the 5th failed login, now locked
    assert fifth.status_code == 200
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


def _text(response):
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def test_the_fifth_failure_says_it_was_wrong_and_that_the_login_is_now_locked(client, demo):
    for _ in range(4):
        page = _text(_login(client, "wrong"))
        assert "didn't match. Please try again." in page and "locked" not in page
    fifth = _login(client, "wrong")
    page = _text(fifth)
    assert "Your username and password didn't match." in page
    assert "That was 5 failed logins in a row: logging in is now locked." in page
    assert "The username manager cannot log in from your address for 15 minutes, until" in page
    assert 'name="password"' not in fifth.content.decode()  # another try now would only be refused


def test_a_locked_out_login_gets_the_styled_page_with_the_duration(client, demo):
    for _ in range(5):
        _login(client, "wrong")
    response = _login(client, demo["password"])
    assert response.status_code == 429
    html = response.content.decode()
    assert '<link rel="stylesheet" href="/static/console/console.css">' in html  # the site's style
    assert '<section class="card narrow">' in html and "<h1>Log in</h1>" in html
    page = _text(response)
    assert "Logging in is locked: this attempt was not checked." in page
    assert "for 15 minutes, until" in page
    assert "After 5 failed logins in a row, a username is locked from an address for 15 minutes." in page
    assert "didn't match" not in page  # the password was not checked
    assert re.search(r'<time datetime="[^"]+">\d\d:\d\d UTC</time>', html)


def test_the_lockout_page_escapes_the_username(client, demo):
    for _ in range(6):
        response = client.post(
            "/accounts/login/", {"username": "<b>eve</b>", "password": "x"}, REMOTE_ADDR="203.0.113.10"
        )
    assert response.status_code == 429
    html = response.content.decode()
    assert "&lt;b&gt;eve&lt;/b&gt;" in html and "<b>eve</b>" not in html


def test_the_lockout_page_takes_the_credentials_as_axes_async_middleware_passes_them(db):
    request = RequestFactory().post("/accounts/login/", {"username": "manager"})
    setattr(request, REFUSED, True)
    response = lockout_response(request, {"username": "dana"})  # (request, credentials) under ASGI
    assert response.status_code == 429
    assert "<strong>dana</strong>" in response.content.decode()
