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
def port() -> int:
    return _free_port()


@pytest.fixture
def console(tmp_path, port):
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
    form = http.get("/new/email-review/").text
    fields = dict(re.findall(r'name="(csrfmiddlewaretoken|start_token)" value="([^"]+)"', form))
    started = http.post("/new/email-review/", data={"f.complaint": COMPLAINT, **fields})
    assert started.status_code == 302, started.text
    status_url = started.headers["location"] + "status.json"
    item_url = _until(lambda: http.get(status_url).json()["item_url"], bool, "the session's first request")

    with (package / "workflow.py").open("a", encoding="utf-8") as source:
        source.write("\n# changed by the reload test\n")
    output.wait_for(r"Changed: workflow\.py; restarting the console\.")
    output.wait_for("Console running at")
    assert process.poll() is None

    # The manager started it, so may reject it but not approve it (the requester rule).
    answer = {"action": "reject", "reason": "Not needed after all", "csrfmiddlewaretoken": _csrf(http, item_url)}
    decided = http.post(item_url + "decide/", data=answer)
    assert decided.status_code == 302, decided.text
    ended = _until(lambda: http.get(status_url).json()["session"], lambda s: s["ended"], "the session's end")
    assert ended["status"] == "completed"
    assert ended["result"] == "Draft rejected."


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _wait_for_exit(pid: int) -> None:
    """Return once process ``pid`` (not our child) has ended; fail after DEADLINE s."""
    import select

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        readable, _, _ = select.select([handle], [], [], DEADLINE)
    finally:
        os.close(handle)
    assert readable, f"process {pid} still runs {DEADLINE} s after its parent was killed"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_dies_with_a_parent_killed_by_sigkill_and_the_port_is_served_again(console, port):
    process, output, _, _ = console
    output.wait_for("Console running at")
    [child] = _children(process.pid)
    process.kill()
    process.wait()
    try:
        _wait_for_exit(child)
    finally:
        if Path(f"/proc/{child}").exists():  # the failure left it running: end it, it is ours
            os.kill(child, signal.SIGKILL)
    with socket.socket() as sock:  # nothing serves the port any more: it can be bound again
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


def test_a_child_that_cannot_bind_its_port_makes_the_reloader_exit_with_an_error(port, request):
    taken = socket.socket()
    taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    taken.bind(("127.0.0.1", port))
    taken.listen()
    request.addfinalizer(taken.close)
    process, output, _, _ = request.getfixturevalue("console")
    output.wait_for("Address already in use")
    try:
        code = process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"serve --reload still runs {DEADLINE} s after its console could not bind its port")
    assert code != 0
    output.wait_for(r"The console stopped by itself \(exit code [1-9]\d*\) before any change")
