"""``manage.py serve``: the links in notification emails point at the address it serves."""

from __future__ import annotations

import io
import json
import shlex
import sys

import pytest
from django.core.management import call_command

from reviewconsole.hints import venv_python
from reviewconsole.inbox.conf import inbox_setting
from reviewconsole.inbox.mail.notifications import item_url


class FakeServer:
    """Daphne's ``Server``, not listening: ``run`` returns at once, as after a clean stop."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.listening_addresses = [("127.0.0.1", 8000)]

    def run(self):
        pass

    def kill_all_applications(self):  # Daphne's "before shutdown" trigger, wrapped by serve
        return None


@pytest.fixture
def serve(monkeypatch, settings, db):
    """``serve(*args)`` runs the command without Daphne; no BASE_URL set, environment restored after.
    (It reads the database: whether the demo's webhook endpoint is there to print how to send one.)"""
    from reviewconsole.console.management.commands import serve as command

    monkeypatch.setattr(command, "Server", FakeServer)
    monkeypatch.setenv("REVIEWCONSOLE_BASE_URL", "")
    monkeypatch.delenv("REVIEWCONSOLE_BASE_URL")  # restored to unset afterwards
    settings.REVIEWCONSOLE = {k: v for k, v in settings.REVIEWCONSOLE.items() if k != "BASE_URL"}
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS]  # serve appends its host: to a copy

    def run(*args):
        with open("/dev/null", "w") as devnull:
            call_command("serve", "--no-migrate", *args, stdout=devnull)

    return run


@pytest.mark.parametrize(
    ("args", "base"),
    [
        ([], "http://127.0.0.1:8000"),
        (["--port", "8765"], "http://127.0.0.1:8765"),
        (["--host", "::1", "--port", "8401"], "http://[::1]:8401"),
        (["--host", "0.0.0.0", "--port", "8402"], "http://127.0.0.1:8402"),
    ],
)
def test_links_use_the_served_address(serve, start_review, args, base):
    serve(*args)
    assert inbox_setting("BASE_URL") == base
    _, item = start_review()
    assert item_url(item) == f"{base}/inbox/items/{item.pk}/"


def test_a_base_url_in_the_environment_wins(serve, monkeypatch):
    monkeypatch.setenv("REVIEWCONSOLE_BASE_URL", "https://review.example.com")
    serve("--port", "8765")
    assert inbox_setting("BASE_URL") == "https://review.example.com"


def test_a_base_url_in_the_settings_wins(serve, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "BASE_URL": "https://review.example.com"}
    serve("--port", "8765")
    assert inbox_setting("BASE_URL") == "https://review.example.com"


class Idle:
    """The worker threads and the recovery loop, not running."""

    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        pass

    def stop(self):
        pass


@pytest.fixture
def serve_output(serve, monkeypatch, tmp_path):
    """``serve_output(*args)``: what ``serve`` prints up to its ready line, run from a project
    directory whose interpreter is ``.venv/bin/python`` (as under ``./run``)."""
    import asyncio

    from reviewconsole.console.management.commands import serve as command

    class ReadyServer(FakeServer):
        def run(self):
            self.kwargs["ready_callable"]()

    monkeypatch.setattr(command, "Server", ReadyServer)
    monkeypatch.setattr(command, "ThreadWorker", Idle)
    monkeypatch.setattr(command, "RecoveryLoop", Idle)
    monkeypatch.setattr(command, "bind_loop", lambda loop: None)
    monkeypatch.setattr(asyncio, "get_event_loop", lambda: None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / ".venv" / "bin" / "python"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWCONSOLE_VAR_DIR", raising=False)  # the suite's own; settings read it at start

    def run(*args):
        out = io.StringIO()
        call_command("serve", "--no-migrate", *args, stdout=out)
        return out.getvalue()

    return run


def _send_one(output):
    [line] = [line for line in output.splitlines() if line.startswith("Send one: ")]
    return shlex.split(line.removeprefix("Send one: "))


def test_it_prints_a_send_webhook_command_with_the_venv_python(demo, serve_output):
    command = _send_one(serve_output())
    assert command[:4] == [".venv/bin/python", "manage.py", "send_webhook", "email-review"]
    assert "--url" not in command  # send_webhook's default, http://127.0.0.1:8000
    assert json.loads(command[command.index("--data") + 1])["complaint"]


def test_it_names_the_var_dir_the_console_was_given(demo, serve_output, monkeypatch):
    """``send_webhook`` without it read an empty ``var/`` and failed with a traceback."""
    monkeypatch.setenv("REVIEWCONSOLE_VAR_DIR", "/tmp/my console")
    command = _send_one(serve_output("--port", "8765"))
    assert command[:5] == [
        "REVIEWCONSOLE_VAR_DIR=/tmp/my console",
        ".venv/bin/python",
        "manage.py",
        "send_webhook",
        "email-review",
    ]


@pytest.mark.parametrize(
    ("args", "url"),
    [
        (["--port", "8765"], "http://127.0.0.1:8765"),
        (["--host", "0.0.0.0", "--port", "8500"], "http://127.0.0.1:8500"),
        (["--host", "::1", "--port", "8401"], "http://[::1]:8401"),
    ],
)
def test_it_adds_the_url_when_served_elsewhere(demo, serve_output, args, url):
    command = _send_one(serve_output(*args))
    assert command[command.index("--url") + 1] == url


def test_the_default_address_on_every_interface_needs_no_url(demo, serve_output):
    assert "--url" not in _send_one(serve_output("--host", "0.0.0.0"))


def test_without_the_demo_it_prints_no_send_command(db, serve_output):
    output = serve_output("--port", "8765")
    assert "Console running at http://127.0.0.1:8765/" in output
    assert "Send one" not in output


def test_outside_the_project_directory_the_interpreter_is_spelled_in_full(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", "/opt/venvs/reviewconsole/bin/python")
    monkeypatch.chdir(tmp_path)
    assert venv_python() == "/opt/venvs/reviewconsole/bin/python"
