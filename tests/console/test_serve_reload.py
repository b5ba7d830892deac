"""``manage.py serve --reload``: a change to a registered workflow package's code restarts the
console, and a session paused before the restart is decided and completes after it.

The console runs as a subprocess on a throwaway ``REVIEWCONSOLE_VAR_DIR`` with a settings module
that registers a package made by ``startworkflow``; the test waits on the console's own output
(its ready line, the restart line) and on the session's status JSON, never on a fixed sleep.
"""

from __future__ import annotations

import io
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command

from tests.conftest import COMPLAINT, DEMO_PASSWORD, DEMO_SECRET

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 90  # seconds any one step may take before the test fails
SETTINGS = """
from reviewconsole.settings.embedded import *  # noqa: F403
from reviewconsole.settings.embedded import REVIEWCONSOLE

WORKFLOWS = [*REVIEWCONSOLE.get("WORKFLOWS", ["reviewconsole.demo"]), "reload_probe"]
REVIEWCONSOLE = {**REVIEWCONSOLE, "WORKFLOWS": WORKFLOWS}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Output:
    """The lines a process prints, readable in order as they come."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str) -> str:
        """The next line matching ``pattern``; fails after :data:`DEADLINE` seconds without one."""
        end = time.monotonic() + DEADLINE
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no line matching {pattern!r}; the console printed:\n{''.join(self.seen)}")
            self.seen.append(line)
            if re.search(pattern, line):
                return line


def _until(read, done, what):
    """Ask ``read()`` until ``done(value)`` (every 0.1 s: the polling interval), at most DEADLINE s."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = read()
        if done(value):
            return value
        threading.Event().wait(0.1)
    pytest.fail(f"{what} did not happen within {DEADLINE} s")


def _csrf(http: httpx.Client, path: str) -> str:
    page = http.get(path)
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


@pytest.fixture
def console(tmp_path):
    call_command("startworkflow", "reload-probe", "--directory", str(tmp_path / "packages"), stdout=io.StringIO())
    (tmp_path / "reload_settings.py").write_text(SETTINGS, encoding="utf-8")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reload_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(tmp_path / "packages"), str(ROOT)]),
        "REVIEWCONSOLE_VAR_DIR": str(tmp_path / "var"),
        "DEMO_PASSWORD": DEMO_PASSWORD,
        "DEMO_WEBHOOK_SECRET": DEMO_SECRET,
        "PYTHONUNBUFFERED": "1",
    }
    for args in (["migrate", "--no-input"], ["demo"]):
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--reload", "--no-migrate", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process, Output(process), f"http://127.0.0.1:{port}", tmp_path / "packages" / "reload_probe"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_change_to_a_workflow_package_restarts_the_console_and_paused_sessions_resume(console):
    process, output, url, package = console
    watching = output.wait_for("Reloading on changes to the workflow code in: ")
    assert str(package.parent / "reload_probe") in watching
    output.wait_for("Console running at")

    http = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    token = _csrf(http, "/accounts/login/")
    logged_in = http.post(
        "/accounts/login/", data={"username": "manager", "password": DEMO_PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert logged_in.status_code == 302
    started = http.post(
        "/new/email-review/", data={"f.complaint": COMPLAINT, "csrfmiddlewaretoken": _csrf(http, "/new/email-review/")}
    )
    assert started.status_code == 302, started.text
    status_url = started.headers["location"] + "status.json"
    item_url = _until(lambda: http.get(status_url).json()["item_url"], bool, "the session's first request")

    with (package / "workflow.py").open("a", encoding="utf-8") as source:
        source.write("\n# changed by the reload test\n")
    output.wait_for(r"Changed: workflow\.py; restarting the console\.")
    output.wait_for("Console running at")
    assert process.poll() is None

    decided = http.post(item_url + "decide/", data={"action": "approve", "csrfmiddlewaretoken": _csrf(http, item_url)})
    assert decided.status_code == 302, decided.text
    ended = _until(lambda: http.get(status_url).json()["session"], lambda s: s["ended"], "the session's end")
    assert ended["status"] == "completed"
    assert ended["result"] == "Draft approved and sent successfully."
