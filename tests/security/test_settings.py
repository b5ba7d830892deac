"""Production settings pass ``check --deploy``; every page carries the security headers; passwords and sessions."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

ROOT = Path(__file__).resolve().parents[2]


def _production_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "REDIS_URL"))}
    env.update(
        DJANGO_SETTINGS_MODULE="reviewconsole.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(60),
        DJANGO_ALLOWED_HOSTS="console.example.com",
        DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        REVIEWCONSOLE_VAR_DIR=str(tmp_path),
    )
    env.update(extra)
    return env


def _check(env):
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    result = _check(_production_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL"])
def test_production_refuses_to_start_without_its_environment(tmp_path, missing):
    env = _production_env(tmp_path)
    del env[missing]
    result = _check(env)
    assert result.returncode != 0
    assert f"Set {missing} in the environment" in result.stderr


def test_production_refuses_a_short_secret_key(tmp_path):
    result = _check(_production_env(tmp_path, DJANGO_SECRET_KEY="short"))
    assert result.returncode != 0
    assert "at least 50 characters" in result.stderr


def test_pages_carry_csp_and_the_other_headers(client, manager):
    client.force_login(manager)
    response = client.get("/inbox/")
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "object-src 'none'" in csp
    assert "frame-ancestors 'self'" in csp  # the two-pane inbox frames its own item pages, nobody else may
    assert "unsafe-inline" not in csp
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_the_session_cookie_expires_and_is_http_only(client, demo):
    response = client.post("/accounts/login/", {"username": "manager", "password": demo["password"]})
    assert response.status_code == 302
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["httponly"]
    assert int(cookie["max-age"]) == settings.SESSION_COOKIE_AGE <= 12 * 3600
    assert cookie["samesite"] == "Lax"


@pytest.mark.parametrize("password", ["short", "12345678901234", "password123", "manager-manager"])
def test_weak_passwords_are_refused(password, django_user_model, db):
    user = django_user_model(username="manager-manager")
    with pytest.raises(ValidationError):
        validate_password(password, user)
