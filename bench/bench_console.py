"""The console on the embedded default, end to end, as a reviewer and an outside system use it.

``manage.py serve`` runs as a subprocess on a throwaway ``REVIEWCONSOLE_VAR_DIR``: Daphne, the
in-process task worker (one thread, the default), SQLite in WAL mode, the in-memory channel
layer, the offline draft model, the demo users and queues (``manage.py demo`` with
``DEMO_PASSWORD`` / ``DEMO_WEBHOOK_SECRET``). This process is only a client: real HTTP with a
logged-in session cookie and CSRF, and a real websocket (``websockets``) on ``/ws/inbox/``.

Each session (one after another, so each latency is the console's own, not a queue's):

1. webhook → websocket: a signed webhook (Standard Webhooks) starts an email review; timed from
   just before the POST to the ``interrupt.created`` message for that session on the websocket of
   the demo ``reviewer`` (subscribed to the support queue, where the workflow routes);
2. decision → next interrupt: the reviewer opens the item's page (untimed), then posts its
   decision form as the browser does (the form's fields, CSRF token, ``action=revise`` with
   feedback); timed from just before the POST to the next ``interrupt.created`` of the session
   (the revised draft, waiting for review);
3. decision → completion: the same for ``approve`` (even sessions) or ``reject`` with a reason
   (odd ones); timed from just before the POST to the commit that completes the session (the
   session row's ``updated_at``, read from the database afterwards; same clock). The next
   session starts once it completed.

p50 / p95 / p99 / max in milliseconds (nearest rank). ``--warmup`` sessions run first, untimed.
Then, in a fresh process on a database of its own, the inbox page's server time with
``--inbox-items`` pending items (``bench/bench_inbox.py``: the whole Django request in-process,
median of ``--inbox-repeat``).

The new-item emails are off (``REVIEWCONSOLE_NOTIFY_EMAIL=0``, as in the other benches and the
browser tests) and the webhook rate limit is raised (``REVIEWCONSOLE_WEBHOOK_RATE_LIMIT``):
both would otherwise measure something else.

Usage::

    python bench/bench_console.py                     # 200 sessions, 100,000 pending items
    python bench/bench_console.py --sessions 5 --inbox-items 2000 --json /tmp/console.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import html.parser
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PASSWORD = "bench-console-pass-1"
SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
REVIEWER = "reviewer"
WORKFLOW = "email-review"
START_DEADLINE = 60.0
WAIT = 30.0
"""Seconds to wait for one message or completion before the run counts as failed."""

TARGETS_MS = {
    "webhook → websocket p95": 100.0,
    "decision → next interrupt p95": 150.0,
    "inbox page, 100,000 pending": 100.0,
}
"""Issue 8's targets for the console, in milliseconds."""
INBOX_TARGET_ROW = "inbox page, every queue"
"""The inbox figure judged against its target: the first page as the demo manager sees it
(every queue), counts per queue not cached."""


# --------------------------------------------------------------------------
# The console and its clients
# --------------------------------------------------------------------------


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
    """``manage.py migrate``, ``demo``, then ``serve`` in a subprocess; output copied to a log."""

    def __init__(self, var: Path) -> None:
        self.var = var
        self.env = console_env(var)
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


# --------------------------------------------------------------------------
# The measurement
# --------------------------------------------------------------------------


def percentiles(samples: list[float]) -> dict[str, float]:
    """n, p50, p95, p99, max, mean (nearest rank) of ``samples``."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {
        "n": len(ordered),
        "p50": at(0.5),
        "p95": at(0.95),
        "p99": at(0.99),
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
    }


def run_sessions(console: Console, sessions: int, warmup: int) -> dict[str, Any]:
    """Drive ``warmup + sessions`` email reviews through the console; latencies in ms."""
    import httpx

    reviewer = Reviewer(console)
    sock = InboxSocket(console, reviewer)
    sender = httpx.Client(timeout=WAIT)
    webhook_ms: list[float] = []
    next_ms: list[float] = []
    post_ms: list[float] = []
    ends: list[tuple[str, float, str]] = []  # session, wall time the final decision was sent, action
    cursor = 0
    started = time.perf_counter()
    try:
        for n in range(warmup + sessions):
            timed = n >= warmup
            t0 = time.perf_counter()
            sid = send_webhook(sender, console, {"complaint": f"Bench complaint {n}: my parcel arrived broken."})
            seen, pk, cursor = sock.wait_for(sid, after=cursor)
            if timed:
                webhook_ms.append((seen - t0) * 1000)

            fields = reviewer.decision_form(pk)
            fields.update(action="revise", feedback="Please be more apologetic and offer a refund.")
            t1 = time.perf_counter()
            status = reviewer.decide(pk, fields)
            t1_done = time.perf_counter()
            if status != 302:
                raise RuntimeError(f"revise of item {pk}: {status}")
            seen, pk2, cursor = sock.wait_for(sid, not_item=pk, after=cursor)
            if timed:
                next_ms.append((seen - t1) * 1000)
                post_ms.append((t1_done - t1) * 1000)

            fields = reviewer.decision_form(pk2)
            action = "approve" if n % 2 == 0 else "reject"
            fields.update(action=action, feedback="")
            if action == "reject":
                fields["reason"] = "The customer already got a refund by phone."
            wall = time.time()
            status = reviewer.decide(pk2, fields)
            if status != 302:
                raise RuntimeError(f"{action} of item {pk2}: {status}")
            _wait_completed(console.database, sid)
            if timed:
                ends.append((sid, wall, action))
    finally:
        elapsed = time.perf_counter() - started
        sock.close()
        reviewer.close()
        sender.close()
    rows = _session_rows(console.database, [sid for sid, _, _ in ends])
    completion_ms = [(rows[sid][1].timestamp() - wall) * 1000 for sid, wall, _ in ends if sid in rows]
    return {
        "sessions": sessions,
        "warmup": warmup,
        "elapsed_s": elapsed,
        "webhook_to_websocket_ms": percentiles(webhook_ms),
        "decision_to_next_interrupt_ms": percentiles(next_ms),
        "decision_to_completion_ms": percentiles(completion_ms),
        "decision_post_ms": percentiles(post_ms),
    }


def inbox_worker(items: int, repeat: int, out: Path) -> None:
    """(In a fresh process.) ``bench_inbox.py``'s fill and timings on a database of its own."""
    var = Path(tempfile.mkdtemp(prefix="bench-console-inbox-"))
    try:
        os.environ.update(console_env(var))
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        from bench import bench_inbox

        settings.ALLOWED_HOSTS.append("testserver")
        call_command("migrate", verbosity=0)
        with open(os.devnull, "w") as devnull:
            call_command("demo", stdout=devnull)
        started = time.perf_counter()
        bench_inbox.fill(items)
        filled = time.perf_counter() - started
        timings = bench_inbox.measure(repeat)
        out.write_text(json.dumps({"items": items, "repeat": repeat, "fill_s": filled, "server_ms": timings}))
    finally:
        import shutil

        shutil.rmtree(var, ignore_errors=True)


def run_inbox(items: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        out = Path(tmp) / "inbox.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--inbox-worker", f"--inbox-items={items}"]
        subprocess.run([*cmd, f"--inbox-repeat={repeat}", f"--json={out}"], cwd=ROOT, check=True)
        return dict(json.loads(out.read_text()))


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


LATENCIES = [
    ("webhook_to_websocket_ms", "webhook → interrupt.created on the reviewer's websocket"),
    ("decision_to_next_interrupt_ms", "decision (revise) → next interrupt.created"),
    ("decision_to_completion_ms", "decision (approve / reject) → session completed"),
    ("decision_post_ms", "decision POST answered (302)"),
]


def report(figures: dict[str, Any]) -> str:
    """The console's figures as Markdown."""
    s = figures["sessions_run"]
    lines = [
        "## Console on the embedded default",
        "",
        f"`manage.py serve` (Daphne, 1 in-process task worker, SQLite WAL, in-memory channel layer, offline draft "
        f"model): {s['sessions']} email reviews one after another ({s['warmup']} warm-up first), each a signed "
        f"webhook, a revise and an approve or reject, in {s['elapsed_s']:.1f} s.",
        "",
        "| latency (ms) | n | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in LATENCIES:
        p = s[key]
        if p["n"]:
            lines.append(f"| {label} | {p['n']} | {p['p50']:.1f} | {p['p95']:.1f} | {p['p99']:.1f} | {p['max']:.1f} |")
        else:
            lines.append(f"| {label} | 0 | - | - | - | - |")
    inbox = figures.get("inbox")
    if inbox:
        lines += [
            "",
            f"Inbox with {inbox['items']:,} pending items (filled in {inbox['fill_s']:.0f} s), server time, median of "
            f"{inbox['repeat']}:",
            "",
            "| request | ms |",
            "|---|---|",
            *[f"| {name.strip()} | {ms:.1f} |" for name, ms in inbox["server_ms"].items()],
        ]
    return "\n".join(lines)


def target_figures(figures: dict[str, Any]) -> dict[str, tuple[str, float | None]]:
    """For each of :data:`TARGETS_MS`: ``(figure as text, the value judged in ms or None)``."""
    s = figures["sessions_run"]
    out: dict[str, tuple[str, float | None]] = {}
    for label, key in (
        ("webhook → websocket p95", "webhook_to_websocket_ms"),
        ("decision → next interrupt p95", "decision_to_next_interrupt_ms"),
    ):
        p = s[key]
        if not p["n"]:
            out[label] = ("not measured", None)
            continue
        few = f" (only {p['n']} sessions)" if p["n"] < 200 else ""
        out[label] = (f"{p['p95']:.1f} ms (p50 {p['p50']:.1f}, p99 {p['p99']:.1f}){few}", None if few else p["p95"])
    inbox = figures.get("inbox")
    label = "inbox page, 100,000 pending"
    if not inbox:
        out[label] = ("not measured", None)
    else:
        ms = float(inbox["server_ms"][INBOX_TARGET_ROW])
        few = inbox["items"] < 100_000
        out[label] = (
            f"{ms:.1f} ms ({INBOX_TARGET_ROW}, {inbox['items']:,} pending)" + (" (too few items)" if few else ""),
            None if few else ms,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sessions", type=int, default=200, help="timed sessions (default 200)")
    p.add_argument("--warmup", type=int, default=5, help="untimed sessions first (default 5)")
    p.add_argument("--inbox-items", type=int, default=100_000, help="pending items for the inbox (0: skip)")
    p.add_argument("--inbox-repeat", type=int, default=10, help="timings per inbox request (median)")
    p.add_argument("--json", type=Path, help="write the figures as JSON to this file")
    p.add_argument("--inbox-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.inbox_worker:
        assert args.json is not None
        inbox_worker(args.inbox_items, args.inbox_repeat, args.json)
        return 0

    figures: dict[str, Any] = {"date": f"{dt.datetime.now():%Y-%m-%d %H:%M}"}
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        console = Console(Path(tmp))
        try:
            figures["sessions_run"] = run_sessions(console, args.sessions, args.warmup)
        except Exception:
            with contextlib.suppress(OSError):
                sys.stderr.write(console.log.read_text()[-4000:])
            raise
        finally:
            console.stop()
    if args.inbox_items > 0:
        figures["inbox"] = run_inbox(args.inbox_items, args.inbox_repeat)
    print(report(figures), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
