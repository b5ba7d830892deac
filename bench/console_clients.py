"""The console under the bench and the clients that drive it, as a reviewer and an outside system do.

:class:`Console` runs ``manage.py migrate``, ``demo`` and ``serve`` in a subprocess on a throwaway
``REVIEWCONSOLE_VAR_DIR`` (the environment: :func:`console_env`); :class:`Reviewer` is the demo
reviewer in a browser-like HTTP client (login form with CSRF, item pages, decision forms read
with :func:`form_fields`); :class:`InboxSocket` is that reviewer's ``/ws/inbox/`` websocket;
:func:`send_webhook` starts an email review with a signed webhook; ``_session_rows`` and
``_wait_completed`` read the sessions straight from the console's SQLite file.

Apart from ``bench_console.py`` (the measurement, its report and the command line) so that each
module holds one concern: this one knows how to start and talk to the console, not what is timed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html.parser
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PASSWORD = "bench-console-pass-1"
SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
REVIEWER = "reviewer"
WORKFLOW = "email-review"
START_DEADLINE = 60.0
WAIT = 30.0
"""Seconds to wait for one message or completion before the run counts as failed."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def console_env(var: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "REVIEWCONSOLE_TASK_BACKEND", "REVIEWCONSOLE_SQLITE_PATH")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="reviewconsole.settings.embedded",
        REVIEWCONSOLE_VAR_DIR=str(var),
        DEMO_PASSWORD=PASSWORD,
        DEMO_WEBHOOK_SECRET=SECRET,
        REVIEWCONSOLE_NOTIFY_EMAIL="0",
        REVIEWCONSOLE_WEBHOOK_RATE_LIMIT="1000000",
        PYTHONUNBUFFERED="1",
    )
    return env


class Console:
    """``manage.py migrate``, ``demo``, then ``serve`` in a subprocess; output copied to a log.

    ``env`` adds to (or overrides) :func:`console_env`, e.g. ``DEMO_API_TOKEN`` for an API client.
    """

    def __init__(self, var: Path, env: dict[str, str] | None = None) -> None:
        self.var = var
        self.env = {**console_env(var), **(env or {})}
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = var / "console.log"
        self.database = var / "reviewconsole.sqlite3"
        self.ready = threading.Event()
        for args in (["migrate", "--no-input"], ["demo"]):
            subprocess.run(
                [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, check=True, capture_output=True
            )
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-migrate", "--port", str(self.port)],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(START_DEADLINE):
            self.stop()
            raise RuntimeError(f"the console did not start; see {self.log}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.log.open("w", encoding="utf-8") as out:
            for line in self.process.stdout:
                out.write(line)
                out.flush()
                if "Console running at" in line:
                    self.ready.set()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


class _FormFields(html.parser.HTMLParser):
    """The fields a browser would post from the form with ``id=form_id`` (inputs and textareas)."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: dict[str, str] = {}
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        elif self.inside and tag == "input" and a.get("name") and a.get("type", "text") not in ("submit", "checkbox"):
            self.fields[a["name"]] = a.get("value", "")
        elif self.inside and tag == "textarea" and a.get("name"):
            self._textarea = a["name"]
            self.fields[self._textarea] = ""

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self._textarea is not None:
            # A browser drops the one newline that follows <textarea>.
            self.fields[self._textarea] = self.fields[self._textarea].removeprefix("\n")
            self._textarea = None
        elif tag == "form":
            self.inside = False


def form_fields(page: str, form_id: str) -> dict[str, str]:
    parser = _FormFields(form_id)
    parser.feed(page)
    return parser.fields


class Reviewer:
    """The demo reviewer in a browser-like HTTP client: login form with CSRF, item pages, decisions."""

    def __init__(self, console: Console, username: str = REVIEWER) -> None:
        import httpx

        self.console = console
        self.http = httpx.Client(base_url=console.url, follow_redirects=False, timeout=WAIT)
        self.http.get("/accounts/login/")  # sets the csrftoken cookie, as for a browser
        token = self._cookie("csrftoken")
        response = self.http.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD},
            headers={"Origin": console.url, "Referer": console.url + "/accounts/login/"},
        )
        if response.status_code != 302:
            raise RuntimeError(f"login failed: {response.status_code}")

    def _cookie(self, name: str) -> str:
        for cookie in self.http.cookies.jar:
            if cookie.name == name:
                return str(cookie.value)
        raise RuntimeError(f"no {name} cookie")

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.http.cookies.jar)

    def decision_form(self, pk: int) -> dict[str, str]:
        """Open the item's page (as the reviewer does before deciding); its decision form's fields."""
        page = self.http.get(f"/inbox/items/{pk}/")
        if page.status_code != 200:
            raise RuntimeError(f"item page {pk}: {page.status_code}")
        fields = form_fields(page.text, "decision-form")
        if "csrfmiddlewaretoken" not in fields:
            raise RuntimeError(f"item page {pk} has no decision form")
        return fields

    def decide(self, pk: int, fields: dict[str, str]) -> int:
        path = f"/inbox/items/{pk}/decide/"
        response = self.http.post(
            path, data=fields, headers={"Origin": self.console.url, "Referer": f"{self.console.url}/inbox/items/{pk}/"}
        )
        return response.status_code

    def close(self) -> None:
        self.http.close()


class InboxSocket:
    """The reviewer's ``/ws/inbox/``, read on a thread; :meth:`wait_for` finds a message."""

    def __init__(self, console: Console, reviewer: Reviewer) -> None:
        from websockets.sync.client import connect

        self._exit = contextlib.ExitStack()
        self.connection = self._exit.enter_context(
            connect(
                console.url.replace("http://", "ws://") + "/ws/inbox/",
                additional_headers={"Cookie": reviewer.cookie_header(), "Origin": console.url},
                open_timeout=10,
            )
        )
        hello = json.loads(self.connection.recv(timeout=10))
        if hello.get("event") != "hello" or not hello.get("queues"):
            raise RuntimeError(f"unexpected hello: {hello}")
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self.changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for raw in self.connection:
                seen = time.perf_counter()
                with self.changed:
                    self.messages.append((seen, json.loads(raw)))
                    self.changed.notify_all()
        except (ConnectionClosed, OSError):
            pass

    def wait_for(self, session_id: str, *, not_item: int | None = None, after: int = 0) -> tuple[float, int, int]:
        """``(time seen, item id, index)`` of the first ``interrupt.created`` for ``session_id``
        from message ``after`` on (and not for item ``not_item``)."""
        deadline = time.monotonic() + WAIT
        with self.changed:
            while True:
                for index in range(after, len(self.messages)):
                    seen, msg = self.messages[index]
                    item = msg.get("item") or {}
                    if (
                        msg.get("event") == "interrupt.created"
                        and item.get("session_id") == session_id
                        and item.get("id") != not_item
                    ):
                        return seen, int(item["id"]), index + 1
                if not self.changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no interrupt.created for session {session_id} within {WAIT} s")

    def close(self) -> None:
        self._exit.close()
        self._thread.join(5)


def send_webhook(http: Any, console: Console, data: dict[str, Any]) -> str:
    """A signed webhook (Standard Webhooks, the demo secret) to the email review; its session id."""
    from standardwebhooks.webhooks import Webhook

    body = json.dumps(data)
    msg_id = f"msg_{uuid.uuid4().hex}"
    now = dt.datetime.now(tz=dt.UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(msg_id, now, body),
    }
    response = http.post(f"{console.url}/hooks/{WORKFLOW}/", content=body, headers=headers)
    if response.status_code != 202:
        raise RuntimeError(f"webhook: {response.status_code} {response.text[:200]}")
    return str(response.json()["session_id"])


def _session_rows(database: Path, ids: list[str]) -> dict[str, tuple[str, dt.datetime]]:
    """``session id → (status, updated_at)`` read straight from the console's SQLite file."""
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    try:
        out = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for sid, status, updated in con.execute(
                f"SELECT id, status, updated_at FROM workflow_sessions_workflowsession WHERE id IN ({marks})",
                chunk,
            ):
                stamp = dt.datetime.fromisoformat(updated)
                out[sid] = (status, stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC))
        return out
    finally:
        con.close()


def _wait_completed(database: Path, session_id: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        row = _session_rows(database, [session_id]).get(session_id)
        if row and row[0] in ("completed", "failed", "cancelled"):
            if row[0] != "completed":
                raise RuntimeError(f"session {session_id} ended {row[0]}")
            return
        time.sleep(0.005)
    raise TimeoutError(f"session {session_id} did not complete within {WAIT} s")
