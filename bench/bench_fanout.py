"""Live fan-out: many reviewers' inbox websockets on one queue, one new item, its delivery to all.

Run on its own (loopback only; bounded by ``--sockets``, ``--items`` and a 60 s wait per item)::

    .venv/bin/python bench/bench_fanout.py                          # 1,000 sockets, embedded default
    DATABASE_URL=postgres://… REDIS_URL=redis://… \\
        .venv/bin/python bench/bench_fanout.py --setup embedded --setup redis
    .venv/bin/python bench/bench_fanout.py --sockets 20 --items 2   # what the CI runs (marker bench)

Setups:

- ``embedded``: ``manage.py serve`` (Daphne, the in-process task worker, SQLite, the in-memory
  channel layer), as ``bench_console.py`` runs it;
- ``redis``: the scale-out stack (``tests/scaleout/stack.py``: PostgreSQL, ``channels_redis``)
  with 2 Daphne processes and one worker; half the sockets on each Daphne.

``--sockets`` reviewers of the ``support`` queue (users made for the run, each logged in with a
session of its own, made in the database as a login would) hold ``/ws/inbox/`` open from this
process (one asyncio loop; the file-descriptor limit raised to its hard limit). Then, one after
another after one untimed warm-up, ``--items`` email reviews are started by a signed webhook; each lands one new item in
``support``. Printed, in milliseconds, by nearest rank over every socket and item:

- *webhook → socket*: from just before the webhook's POST to a socket receiving the item's
  ``interrupt.created`` (the workflow's first step, the item's commit and the fan-out);
- *first socket → socket*: from the first socket that received it to each socket: the fan-out alone;
- *webhook answered*: the webhook's POST, sent to its 202 (one sample per item).

The target (issue 18) is webhook → socket p95 < 250 ms at 1,000 sockets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WAIT = 60.0
"""Seconds an item may take to reach every socket before the run counts as failed."""

_MAKE_SESSIONS = """
import json
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import Group, User
from django.utils.module_loading import import_string
from importlib import import_module
store = import_module(settings.SESSION_ENGINE).SessionStore
backend = next(b for b in settings.AUTHENTICATION_BACKENDS if hasattr(import_string(b), "get_user"))
group = Group.objects.get(name="queue:support")
keys = []
for n in range({count}):
    user, _ = User.objects.get_or_create(username=f"fanout{{n}}")
    user.set_unusable_password()
    user.save()
    user.groups.add(group)
    session = store()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = backend
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    keys.append(session.session_key)
print("SESSIONS " + json.dumps(keys))
"""


def make_sessions(manage: Any, count: int) -> list[str]:
    """``count`` reviewers of ``support``, each logged in: their session keys. ``manage`` runs
    ``manage.py`` with the console's environment and returns its output."""
    out = manage("shell", "-c", _MAKE_SESSIONS.format(count=count))
    line = next(line for line in out.splitlines() if line.startswith("SESSIONS "))
    return list(json.loads(line.removeprefix("SESSIONS ")))


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to its hard limit (servers started later inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Sockets:
    """The reviewers' websockets on one loop; for each session, when each socket first received
    its ``interrupt.created`` (the time taken before the frame is parsed)."""

    def __init__(self) -> None:
        self.count = 0
        self.created: dict[str, list[float | None]] = {}
        self.arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing: list[Any] = []

    async def open(self, urls: list[str], cookies: list[str], origin: str, headers: dict[str, str]) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake

        async def one(index: int, url: str, cookie: str) -> None:
            for attempt in range(3):  # a busy server may drop a handshake (Daphne's 5 s limits): not timed
                try:
                    connection = await connect(
                        url,
                        additional_headers={"Cookie": cookie, "Origin": origin, **headers},
                        open_timeout=WAIT,
                        max_queue=None,
                    )
                    break
                except (InvalidHandshake, OSError):
                    if attempt == 2:
                        raise
            hello = json.loads(await asyncio.wait_for(connection.recv(), WAIT))
            if hello.get("event") != "hello" or not hello.get("queues"):
                raise RuntimeError(f"unexpected hello: {hello}")
            self._closing.append(connection)
            self._tasks.append(asyncio.create_task(self._read(index, connection)))

        self.count = len(urls)
        for start in range(0, len(urls), 20):  # 20 at a time: a burst of handshakes is not what is measured
            await asyncio.gather(*(one(i, urls[i], cookies[i]) for i in range(start, min(start + 20, len(urls)))))

    async def _read(self, index: int, connection: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for raw in connection:
                seen = time.perf_counter()
                if "interrupt.created" not in raw:
                    continue
                message = json.loads(raw)
                session_id = (message.get("item") or {}).get("session_id")
                if message.get("event") != "interrupt.created" or not session_id:
                    continue
                times = self.created.setdefault(session_id, [None] * self.count)
                if times[index] is None:
                    times[index] = seen
                    self.arrived.set()
        except ConnectionClosed:
            pass

    async def wait_all(self, session_id: str) -> tuple[list[float], int]:
        """When each socket received the session's ``interrupt.created``, once all have or
        :data:`WAIT` seconds passed; and how many had not by then."""
        deadline = time.monotonic() + WAIT
        while True:
            seen = self.created.get(session_id, [None] * self.count)
            left = deadline - time.monotonic()
            if all(t is not None for t in seen) or left <= 0:
                return [t for t in seen if t is not None], sum(t is None for t in seen)
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), left)

    async def close(self) -> None:
        for connection in self._closing:
            await connection.close()
        for task in self._tasks:
            task.cancel()


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 / p95 / max by nearest rank."""
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]

    return {"p50": rank(50), "p95": rank(95), "max": ordered[-1]}


async def fan_out(target: Any, sockets: int, items: int) -> dict[str, Any]:
    """Open the sockets on ``target`` (:class:`Embedded` or :class:`Scaleout`), start ``items``
    email reviews one after another; the latencies (ms) and the counts."""
    keys = make_sessions(target.manage, sockets)
    urls = [target.ws_urls[n % len(target.ws_urls)] for n in range(sockets)]
    opened = Sockets()
    started = time.perf_counter()
    await opened.open(urls, [f"sessionid={k}" for k in keys], target.origin, target.ws_headers)
    connect_s = time.perf_counter() - started
    total, spread, answered = [], [], []
    try:
        await opened.wait_all(await asyncio.to_thread(target.start_review, -1))  # warm-up: first imports, caches
        missed = 0
        for n in range(items):
            sent = time.perf_counter()
            session_id = await asyncio.to_thread(target.start_review, n)
            answered.append((time.perf_counter() - sent) * 1000)
            seen, missing = await opened.wait_all(session_id)
            missed += missing
            if not seen:
                continue
            total += [(t - sent) * 1000 for t in seen]
            spread += [(t - min(seen)) * 1000 for t in seen]
    finally:
        await opened.close()
    return {
        "sockets": sockets,
        "items": items,
        "connect_s": connect_s,
        "webhook → socket": percentiles(total) if total else None,
        "first socket → socket": percentiles(spread) if spread else None,
        "webhook answered": percentiles(answered),
        "missed": missed,
    }


class Embedded:
    """``manage.py serve`` on a throwaway var dir (``bench/console_clients.py``)."""

    name = "embedded (1 Daphne, in-memory layer, SQLite)"

    def __init__(self) -> None:
        import httpx

        from bench.console_clients import Console

        self.console = Console(Path(tempfile.mkdtemp(prefix="reviewconsole-fanout-")))
        self.http = httpx.Client(timeout=WAIT)
        self.ws_urls = [self.console.url.replace("http://", "ws://") + "/ws/inbox/"]
        self.origin = self.console.url
        self.ws_headers: dict[str, str] = {}

    def manage(self, *args: str) -> str:
        import subprocess

        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.console.env, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{done.stderr[-2000:]}")
        return done.stdout

    def start_review(self, n: int) -> str:
        from bench.console_clients import send_webhook

        return send_webhook(self.http, self.console, {"complaint": f"Fan-out complaint {n}: my parcel arrived broken."})

    def stop(self) -> None:
        self.http.close()
        self.console.stop()


class Scaleout:
    """The scale-out stack with 2 Daphne processes and ``channels_redis``; sockets straight to each Daphne."""

    name = "scale-out (2 Daphne, channels_redis, PostgreSQL)"

    def __init__(self) -> None:
        from tests.scaleout.stack import Stack

        self.stack = Stack(Path(tempfile.mkdtemp(prefix="reviewconsole-fanout-")), web=2, workers=1).start()
        self.http = self.stack.client()
        self.ws_urls = [f"ws://127.0.0.1:{web.port}/ws/inbox/" for web in self.stack.webs]
        self.origin = self.stack.url
        self.ws_headers = {"X-Forwarded-Proto": "https"}  # as nginx says (Daphne runs with --proxy-headers)

    def manage(self, *args: str) -> str:
        return self.stack.manage(*args)

    def start_review(self, n: int) -> str:
        data = {"complaint": f"Fan-out complaint {n}: my parcel arrived broken."}
        response = self.stack.send_webhook(self.http, "email-review", data, webhook_id=f"msg_{uuid.uuid4().hex}")
        if response.status_code != 202:
            raise RuntimeError(f"webhook: {response.status_code} {response.text[:200]}")
        return str(response.json()["session_id"])

    def stop(self) -> None:
        self.http.close()
        self.stack.stop()


SETUPS = {"embedded": Embedded, "redis": Scaleout}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench_fanout.py",
        description="Open many reviewers' inbox websockets on one queue, start new items, time their delivery to all.",
    )
    parser.add_argument("--sockets", type=int, default=1000, help="reviewers' websockets (default 1000)")
    parser.add_argument("--items", type=int, default=5, help="new items, one after another (default 5)")
    parser.add_argument(
        "--setup", action="append", choices=sorted(SETUPS), help="embedded (default) and/or redis; repeatable"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.sockets < 1 or args.items < 1:
        parser.error("--sockets and --items must be at least 1")
    args.setup = args.setup or ["embedded"]
    if "redis" in args.setup and not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        parser.error("--setup redis needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    return args


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    limit = raise_fd_limit()
    if limit < 2 * args.sockets + 200:
        raise SystemExit(f"the open-file limit ({limit}) is too low for {args.sockets} sockets")
    results: list[dict[str, Any]] = []
    for setup in args.setup:
        target = SETUPS[setup]()
        try:
            figures = asyncio.run(fan_out(target, args.sockets, args.items))
        finally:
            target.stop()
        figures["setup"] = target.name
        results.append(figures)
        print(
            f"{target.name}: {figures['sockets']:,} sockets on one queue (opened in {figures['connect_s']:.1f} s), "
            f"{figures['items']} new items one after another; ms, nearest rank over every socket and item"
        )
        for row in ("webhook → socket", "first socket → socket", "webhook answered"):
            p = figures[row] or {"p50": math.nan, "p95": math.nan, "max": math.nan}
            print(f"  {row:<24} p50 {p['p50']:8.1f}   p95 {p['p95']:8.1f}   max {p['max']:8.1f}")
        expected = figures["sockets"] * figures["items"]
        print(f"  deliveries missing after {WAIT:.0f} s: {figures['missed']} of {expected}")
        met = not figures["missed"] and figures["webhook → socket"]["p95"] < 250
        print(f"  target webhook → socket p95 < 250 ms at 1,000 sockets: {'met' if met else 'MISSED'}")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
