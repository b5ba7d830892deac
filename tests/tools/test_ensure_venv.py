"""``tools/ensure-venv`` (run by ``./run`` and ``./test``) runs pip only when something changed
since its last successful install: pyproject.toml, the extras asked for, the venv's Python.

The script runs from a copy of the project (its ``tools/`` and a ``pyproject.toml``) with
``VENV`` set to a venv whose ``python`` is a stand-in: it records ``-m pip install`` calls in a
log instead of installing (failing when ``PIP_FAILS`` is set) and is the real Python otherwise.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
if [ "${1:-}" = "-m" ] && [ "${2:-}" = "pip" ]; then
  echo "${@: -1}" >>"$PIP_LOG"
  echo "$*" >>"$PIP_LOG.args"
  [ -z "${PIP_FAILS:-}" ]
  exit
fi
exec "$REAL_PYTHON" "$@"
"""


@pytest.fixture
def project(tmp_path):
    """A copy of the project's tools and pyproject.toml, and its stand-in venv."""
    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "ensure-venv", tmp_path / "tools" / "ensure-venv")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON, encoding="utf-8")
    python.chmod(0o755)
    return tmp_path


def ensure(project: Path, *extras: str, pip_fails: bool = False) -> list[str]:
    """Run the script; returns the pip installs it made (their requirement specs)."""
    log = project / "pip.log"
    before = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    env = {
        "PATH": "/usr/bin:/bin",
        "VENV": str(project / "venv"),
        "PIP_LOG": str(log),
        "REAL_PYTHON": sys.executable,
        **({"PIP_FAILS": "1"} if pip_fails else {}),
    }
    result = subprocess.run(
        [str(project / "tools" / "ensure-venv"), *extras], env=env, capture_output=True, text=True, timeout=60
    )
    after = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    if pip_fails:
        assert result.returncode != 0
    else:
        assert result.returncode == 0, result.stderr
    installs = after[len(before) :]
    assert ("Installing reviewconsole" in result.stdout) == bool(installs)
    return installs


def test_a_second_start_installs_nothing(project):
    assert ensure(project) == ["."]
    assert ensure(project) == []
    assert ensure(project) == []


def test_a_changed_pyproject_installs_again(project):
    assert ensure(project) == ["."]
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n# a new dependency\n", encoding="utf-8")
    assert ensure(project) == ["."]
    assert ensure(project) == []


def test_extras_are_part_of_what_was_installed(project):
    assert ensure(project) == ["."]
    assert ensure(project, "test") == [".[test]"]  # ./test after ./run: the test extras are new
    assert ensure(project, "test") == []
    assert ensure(project) == []  # ./run after ./test: the test install holds the project too
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert ensure(project) == ["."]
    assert ensure(project, "test") == [".[test]"]  # the old test install was for the old file


def test_a_failed_install_is_tried_again(project):
    assert ensure(project, pip_fails=True) == ["."]
    assert ensure(project) == ["."]
    assert ensure(project) == []


def test_another_python_installs_again(project):
    assert ensure(project) == ["."]
    stamp = project / "venv" / ".reviewconsole-installed"
    [line] = stamp.read_text(encoding="utf-8").splitlines()
    stamp.write_text("0" * 64 + line[64:] + "\n", encoding="utf-8")  # as if made by another Python
    assert ensure(project) == ["."]


def test_the_test_extras_install_the_python_client_too(project):
    """``clients/python`` (the API's client, its adapters tested in the suite) comes with the test
    extras, editable; a change to its pyproject.toml installs again."""
    client = project / "clients" / "python" / "pyproject.toml"
    client.parent.mkdir(parents=True)
    client.write_text("[project]\nname = 'reviewconsole-client'\n", encoding="utf-8")
    assert ensure(project) == ["."]
    assert ensure(project, "test") == [".[test]"]
    args = (project / "pip.log.args").read_text(encoding="utf-8").splitlines()
    assert "-e clients/python" not in args[0]
    assert "-e clients/python -e .[test]" in args[1]
    assert ensure(project, "test") == []
    client.write_text(client.read_text(encoding="utf-8") + "dependencies = ['httpx']\n", encoding="utf-8")
    assert ensure(project, "test") == [".[test]"]
