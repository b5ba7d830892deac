"""The default model's environment (``OPENAI_*``) as ``manage.py`` reads it: a malformed number
stops the command with one line naming the variable (no traceback); a local server's base URL
without a key is not warned about (``reviewconsole.W101``), a hosted one's still is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewconsole.settings import env as settings_env

ROOT = Path(__file__).resolve().parents[2]


def _check(tmp_path, **env_vars) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REVIEWCONSOLE_", "DJANGO_SETTINGS"))}
    env.update(REVIEWCONSOLE_VAR_DIR=str(tmp_path), **env_vars)
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("OPENAI_TEMPERATURE", "hot", "expected a number, e.g. 0.2."),
        ("OPENAI_TIMEOUT", "1m", "expected a number, e.g. 0.2."),
        ("OPENAI_RETRIES", "abc", "expected a whole number, e.g. 3."),
    ],
)
def test_a_malformed_number_names_the_variable_without_a_traceback(tmp_path, name, value, expected):
    done = _check(tmp_path, **{name: value})
    assert done.returncode == 1
    assert done.stderr.strip() == f"ImproperlyConfigured: The environment variable {name} is {value!r}: {expected}"


def test_a_local_server_without_a_key_is_not_warned_about(tmp_path):
    done = _check(tmp_path, REVIEWCONSOLE_MODEL="openai", OPENAI_BASE_URL="http://127.0.0.1:8080/v1")
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout
    assert "W101" not in done.stdout + done.stderr


def test_a_hosted_server_without_a_key_is_still_warned_about(tmp_path):
    done = _check(tmp_path, REVIEWCONSOLE_MODEL="openai", OPENAI_BASE_URL="https://api.example.com/v1")
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).count("reviewconsole.W101") == 1


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.0.0.2/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8080/v1", False),
        ("", False),
    ],
)
def test_local_urls(url, local):
    assert settings_env.is_local_url(url) is local


def test_numbers_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RC_TEST_NUMBER", " 0.5 ")
    assert settings_env.number("RC_TEST_NUMBER", None, float) == 0.5
    monkeypatch.setenv("RC_TEST_NUMBER", "")
    assert settings_env.number("RC_TEST_NUMBER", 2, int) == 2
    monkeypatch.setenv("RC_TEST_NUMBER", "2.5")
    with pytest.raises(settings_env.EnvironmentValueError, match=r"RC_TEST_NUMBER is '2\.5': expected a whole number"):
        settings_env.number("RC_TEST_NUMBER", 2, int)
