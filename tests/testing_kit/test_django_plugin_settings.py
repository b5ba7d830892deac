"""reviewconsole.testing.django without Django settings: a test using ``console_workflow`` errors
with a message saying what to set (pytest-django alone would skip it, ``2 skipped``, silently);
with the setting docs/workflows.md names it runs. Each case is a pytest run in a subprocess on a
package outside the repository, as an author's is."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from reviewconsole.testing.django import NO_SETTINGS

TEST = """
def test_in_the_inbox(console_workflow):
    run = console_workflow("email-review", {"complaint": "My phone battery drains too fast"})
    run.assert_waiting(kind="input", count=1)
"""


def _pytest(folder, **env_vars) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "REVIEWCONSOLE_WORKFLOWS")}
    # A var/ of its own: the test settings keep the test database in REVIEWCONSOLE_VAR_DIR, and this
    # run's pytest-django must not recreate the one the suite running it is using.
    env.update(REVIEWCONSOLE_VAR_DIR=str(folder / "var"), **env_vars)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def package(tmp_path):
    folder = tmp_path / "acme_tests"
    folder.mkdir()
    (folder / "test_acme.py").write_text(TEST, encoding="utf-8")
    return folder


def test_without_settings_the_fixture_fails_loudly_saying_what_to_set(package):
    done = _pytest(package)
    assert done.returncode != 0, done.stdout
    assert "1 error" in done.stdout and "skipped" not in done.stdout, done.stdout
    assert NO_SETTINGS in done.stdout
    assert "DJANGO_SETTINGS_MODULE=reviewconsole.settings.test" in NO_SETTINGS


def test_with_the_documented_setting_it_runs(package):
    done = _pytest(package, DJANGO_SETTINGS_MODULE="reviewconsole.settings.test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
