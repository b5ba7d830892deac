"""SIGTERM to ``manage.py serve`` while API requests or AG-UI streams start sessions: it lets them
finish and exits 0, without a traceback.

Before, Daphne stopped its event loop under a request thread waiting in ``async_to_sync``
(``session_start`` runs the engine's coroutines on that loop): the thread waited for ever with
its SQLite transaction open, the task workers logged "database is locked" and the process never
exited (or printed "CurrentThreadExecutor already quit"). Now ``serve`` waits for the requests
being served before the reactor shuts down (``reviewconsole/in_flight.py``). An AG-UI stream
starts its session after its response object was built, so it was not counted as a request: the
same hang, found by a helper attacking the door (4 of 4 SIGTERMs into a burst of first
requests); its calls are counted too now, and refused once ``serve`` is stopping.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request

import httpx
import pytest

from tests.console.embedded import EmbeddedConsole
from tests.scaleout.stack_parts import wait_for

TOKEN = "rc_" + "s" * 43
EXIT_DEADLINE = 45.0  # seconds serve may take to stop (it waits at most 10 s for requests)
SENDERS = 4
AGUI_SENDERS = 16  # streams at once: their sessions' starts queue on the thread pool, as in a burst
CUT = "cut off"  # a stream the stopping server closed before its last event


def _start_sessions(url: str, stop: threading.Event, answers: list[int]) -> None:
    while not stop.is_set():
        body = json.dumps({"workflow": "email-review", "input": {"complaint": "The lid is cracked"}}).encode()
        request = urllib.request.Request(
            f"{url}/api/v1/sessions",
            data=body,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answers.append(response.status)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return  # the server is going away


def _start_agui_threads(url: str, stop: threading.Event, ends: list[str]) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        body = {
            "threadId": f"t-{threading.get_ident()}-{n}",
            "runId": f"r-{n}",
            "state": {},
            "messages": [{"id": f"m-{n}", "role": "user", "content": "The oven door is broken"}],
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
        last = ""
        try:
            with httpx.stream(
                "POST", f"{url}/agui/email-review/", json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
            ) as response:
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        last = json.loads(line.removeprefix("data: "))["type"]
        except httpx.HTTPError:
            ends.append(CUT)
            return  # the server is going away
        ends.append(last)


@pytest.fixture
def console(tmp_path):
    console = EmbeddedConsole(tmp_path, env={"DEMO_API_TOKEN": TOKEN, "DEMO_PASSWORD": "shutdown-pass-123"})
    console.manage("migrate", "--no-input", "--verbosity", "0")
    console.manage("demo")
    yield console
    console.stop()


def _sessions(console: EmbeddedConsole) -> int:
    return console.sql("SELECT COUNT(*) AS n FROM workflow_sessions_workflowsession")[0]["n"]


def _sigterm_during(console: EmbeddedConsole, send, senders: int, started: int, door: str) -> list:
    """Start ``senders`` threads running ``send(url, stop, results)``; once ``started`` sessions
    exist, SIGTERM ``serve``. Asserts it exits 0 within the deadline, its log after the signal free
    of tracebacks and lock errors; returns ``results``."""
    console.start(migrate=False)
    wait_for(lambda: socket.create_connection(("127.0.0.1", console.port), timeout=1).close() or True, 30, "port")
    stop, results = threading.Event(), []
    threads = [threading.Thread(target=send, args=(console.url, stop, results)) for _ in range(senders)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: _sessions(console) >= started, 60, f"sessions started through {door}")
        before = len(console.log.read_text())  # the storm's own lock waits are not the shutdown's
        console.process.send_signal(signal.SIGTERM)
        try:
            code = console.process.wait(timeout=EXIT_DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not exit after SIGTERM:\n{console.log.read_text()[-3000:]}")
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    log = console.log.read_text()[before:]
    assert code == 0, log[-3000:]
    assert "Traceback" not in log and "database is locked" not in log, log[-3000:]
    assert log.rstrip().endswith("Stopped.")
    return results


def test_sigterm_while_requests_start_sessions_exits_0_without_a_traceback(console):
    answers = _sigterm_during(console, _start_sessions, SENDERS, 10, "the API")
    assert answers and set(answers) == {202}


def test_sigterm_while_agui_streams_start_sessions_exits_0_without_a_traceback(console):
    ends = _sigterm_during(console, _start_agui_threads, AGUI_SENDERS, AGUI_SENDERS, "AG-UI")
    assert len(ends) >= AGUI_SENDERS, ends  # every thread's streams reported how they ended
    assert set(ends) <= {"RUN_FINISHED", "RUN_ERROR", "", CUT}, ends  # each stream ended, or was cut off
