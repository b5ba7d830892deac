"""Load test of the scale-out stack, on loopback only: webhooks, inbox reads, decisions and live
websocket clients at once, against PostgreSQL + Redis + Daphne processes + workers behind nginx.

Each session is an email review (the product's own workflow, drafts from the offline model):
a signed webhook starts it, a reviewer sends ``revisions`` rounds of feedback and then approves.
Meanwhile ``sockets`` reviewers hold the live inbox open and ``readers`` reload the inbox page.
Bounded: ``sessions`` sessions and ``seconds`` of wall time at most, whichever ends first.
``rate`` paces the webhooks (sessions per second, offered whatever the answers): below the stack's
capacity the latencies are the service's own; with no rate, the senders send as fast as they can
and the latencies are mostly the backlog's wait (the throughput is then the capacity). A reviewer
with nothing to decide reads the items again after ``poll`` seconds: polling every few
milliseconds with 20 reviewers saturates a 2-CPU machine that also runs the whole stack and this
script, and the figures then measure that (this script's threads included), not the console.
Likewise a reader loads the whole inbox page every ``read_every`` seconds.

Printed, with p50 / p95 / p99 / max in milliseconds:

- webhook → interrupt visible: from sending the webhook to a subscribed websocket receiving
  ``interrupt.created`` for its session (one sample per socket); split in two, with the interrupt
  row's ``created_at`` (same machine, same clock): webhook → row stored, and row stored → socket
  (every ``interrupt.created`` seen);
- decision → next interrupt: from sending feedback to the next ``interrupt.created`` of the session
  on a socket (the revised draft waiting for review);
- decision → completion: from sending the approval to the session's completing commit;
- inbox page: ``GET /inbox/``;
- throughput: sessions completed and HTTP requests per second.

Usage (``DATABASE_URL`` a PostgreSQL server whose role may create databases, ``REDIS_URL``)::

    python bench/load_scaleout.py --sessions 300 --reviewers 20 --sockets 10 --senders 4

starts a stack of its own (``tests/scaleout/stack.py``; new-item mails to an SMTP receiver on
loopback) and stops it afterwards. The CI runs it at a small size (``tests/scaleout/test_load.py``).

Its reviewers poll the inbox list, so its figures include that polling. ``bench/load_cpu.py`` is
the load whose reviewers learn of items only from their sockets, at fixed webhook rates: it reports
the server CPU per completed session per process kind, the capacity, and Daphne against uvicorn
(issue 18, target 4).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_console import percentiles  # noqa: E402
from bench.load_cpu import mail_env  # noqa: E402
from tests.inbox.smtp_receiver import SmtpReceiver  # noqa: E402
from tests.scaleout.clients import InboxSocket, Reviewer  # noqa: E402
from tests.scaleout.stack import Stack  # noqa: E402


@dataclass
class Config:
    sessions: int = 20
    reviewers: int = 4
    sockets: int = 2
    senders: int = 2
    readers: int = 1
    revisions: int = 1
    seconds: float = 120.0
    rate: float = 0.0
    """Webhooks per second, paced from the start (0: each sender sends as fast as it can)."""
    poll: float = 0.5
    """Seconds a reviewer with nothing to decide waits before reading the items again."""
    read_every: float = 1.0
    """Seconds between two inbox page loads of one reader."""


@dataclass
class Record:
    """What the load's threads saw; times from ``time.monotonic()`` unless named ``wall``."""

    sent: dict[str, float] = field(default_factory=dict)  # session → webhook sent
    decisions: list[tuple[str, int, str, float, float]] = field(default_factory=list)  # sid, item, action, t, wall
    pages: list[float] = field(default_factory=list)
    requests: int = 0
    started: float = 0.0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _sender(stack: Stack, record: Record, queue: list[int], rate: float, stop: threading.Event) -> None:
    with stack.client() as client:
        while not stop.is_set():
            with record.lock:
                if not queue:
                    return
                n = queue.pop(0)
            if rate and stop.wait(max(0.0, record.started + n / rate - time.monotonic())):
                return
            t0 = time.monotonic()
            response = stack.send_webhook(client, "email-review", {"complaint": f"Load test complaint {n}"})
            with record.lock:
                record.requests += 1
                if response.status_code == 202:
                    record.sent[response.json()["session_id"]] = t0
                else:
                    record.errors.append(f"webhook {response.status_code}")


def _reviewer(
    reviewer: Reviewer, index: int, count: int, config: Config, record: Record, stop: threading.Event
) -> None:
    rounds: dict[str, int] = {}
    while not stop.is_set():
        items = [i for i in reviewer.items() if i["workflow"] == "email-review" and i["id"] % count == index]
        with record.lock:
            record.requests += 1
        if not items:
            stop.wait(config.poll)
            continue
        for item in items:
            sid = item["session_id"]
            done = rounds.get(sid, 0)
            action, feedback = ("revise", "shorter") if done < config.revisions else ("approve", "")
            t0, wall = time.monotonic(), time.time()
            response = reviewer.decide(item["id"], action, feedback)
            with record.lock:
                record.requests += 1
                if response.status_code == 302:
                    rounds[sid] = done + 1
                    record.decisions.append((sid, item["id"], action, t0, wall))
                elif response.status_code != 409:
                    record.errors.append(f"decide {response.status_code}")


def _reader(reviewer: Reviewer, record: Record, every: float, stop: threading.Event) -> None:
    while not stop.is_set():
        t0 = time.monotonic()
        response = reviewer.inbox_page()
        elapsed = time.monotonic() - t0
        with record.lock:
            record.requests += 1
            if response.status_code == 200:
                record.pages.append(elapsed)
            else:
                record.errors.append(f"page {response.status_code}")
        stop.wait(every)


def run(stack: Stack, config: Config) -> dict[str, Any]:
    """Drive the load against a started ``stack``; returns the figures (milliseconds)."""
    names = stack.create_reviewers(config.reviewers + config.sockets + config.readers, queues=("support",))
    people = [Reviewer(stack, name).login() for name in names]
    deciders = people[: config.reviewers]
    watchers = people[config.reviewers : config.reviewers + config.sockets]
    readers = people[config.reviewers + config.sockets :]
    sockets = [InboxSocket(stack, w) for w in watchers]
    record, stop = Record(), threading.Event()
    queue = list(range(config.sessions))
    threads = [
        threading.Thread(target=_sender, args=(stack, record, queue, config.rate, stop)) for _ in range(config.senders)
    ]
    threads += [
        threading.Thread(target=_reviewer, args=(r, n, len(deciders), config, record, stop))
        for n, r in enumerate(deciders)
    ]
    threads += [threading.Thread(target=_reader, args=(r, record, config.read_every, stop)) for r in readers]
    started = record.started = time.monotonic()
    for thread in threads:
        thread.start()
    deadline = started + config.seconds
    completed = 0
    while time.monotonic() < deadline:
        with record.lock:
            sids = list(record.sent)
        if sids:
            completed = stack.count_status(sids, "completed")
        if completed >= config.sessions:
            break
        time.sleep(0.25)
    elapsed = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join(30)
    for socket in sockets:
        socket.close()
    for person in people:
        person.close()
    return _figures(stack, config, record, sockets, completed, elapsed)


def _figures(
    stack: Stack, config: Config, record: Record, sockets: list[InboxSocket], completed: int, elapsed: float
) -> dict[str, Any]:
    created: dict[str, list[tuple[float, int]]] = {}  # session → (time seen, item id) per socket message
    stored: dict[int, float] = {}  # item id → its row's created_at, on the monotonic clock
    wall_offset = time.time() - time.monotonic()
    delivered = []  # interrupt row stored → message seen on a socket
    for socket in sockets:
        for seen, message in socket.messages:
            item = message.get("item") or {}
            if message.get("event") == "interrupt.created" and item.get("session_id"):
                created.setdefault(item["session_id"], []).append((seen, item["id"]))
                if item.get("created_at"):
                    at = dt.datetime.fromisoformat(item["created_at"]).timestamp() - wall_offset
                    stored[item["id"]] = at
                    delivered.append(seen - at)
    visible, to_stored = [], []
    for sid, t0 in record.sent.items():
        firsts: dict[int, float] = {}
        for seen, item_id in created.get(sid, []):
            firsts.setdefault(item_id, seen)
        if firsts:
            first_item = min(firsts, key=firsts.__getitem__)
            visible += [seen - t0 for seen, item_id in created[sid] if item_id == first_item]
            if first_item in stored:
                to_stored.append(stored[first_item] - t0)
    next_interrupt, completion = [], []
    ended = {
        r["id"]: r["updated_at"]
        for r in stack.sql(
            "SELECT id, updated_at FROM workflow_sessions_workflowsession WHERE status = 'completed' AND id = ANY(%s)",
            list(record.sent),
        )
    }
    for sid, item_id, action, t0, wall in record.decisions:
        if action == "approve":
            if sid in ended:
                completion.append(ended[sid].timestamp() - wall)
            continue
        later = [seen for seen, other in created.get(sid, []) if other > item_id and seen >= t0]
        if later:
            next_interrupt.append(min(later) - t0)
    ms = 1000.0
    return {
        "config": config.__dict__,
        "stack": {"web": len(stack.webs), "workers": len(stack.workers)},
        "elapsed_s": elapsed,
        "sessions_completed": completed,
        "sessions_per_s": completed / elapsed if elapsed else 0.0,
        "requests_per_s": record.requests / elapsed if elapsed else 0.0,
        "errors": record.errors,
        "webhook_to_visible_ms": percentiles([v * ms for v in visible]),
        "webhook_to_stored_ms": percentiles([v * ms for v in to_stored]),
        "stored_to_socket_ms": percentiles([v * ms for v in delivered]),
        "decision_to_next_interrupt_ms": percentiles([v * ms for v in next_interrupt]),
        "decision_to_completion_ms": percentiles([v * ms for v in completion]),
        "inbox_page_ms": percentiles([v * ms for v in record.pages]),
    }


def report(figures: dict[str, Any]) -> str:
    """The figures as a table."""
    lines = [
        f"stack: {figures['stack']['web']} Daphne + {figures['stack']['workers']} workers behind nginx; load: "
        + ", ".join(f"{k}={v}" for k, v in figures["config"].items()),
        f"{figures['sessions_completed']} sessions completed in {figures['elapsed_s']:.1f} s: "
        f"{figures['sessions_per_s']:.2f} sessions/s, {figures['requests_per_s']:.1f} HTTP requests/s, "
        f"{len(figures['errors'])} errors",
        f"{'latency (ms)':34} {'n':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}",
    ]
    for key, label in [
        ("webhook_to_visible_ms", "webhook -> interrupt visible"),
        ("webhook_to_stored_ms", "  of which webhook -> row stored"),
        ("stored_to_socket_ms", "  interrupt row stored -> socket"),
        ("decision_to_next_interrupt_ms", "decision -> next interrupt"),
        ("decision_to_completion_ms", "decision -> completion"),
        ("inbox_page_ms", "inbox page"),
    ]:
        p = figures[key]
        if p["n"]:
            lines.append(f"{label:34} {p['n']:>6} {p['p50']:>8.0f} {p['p95']:>8.0f} {p['p99']:>8.0f} {p['max']:>8.0f}")
        else:
            lines.append(f"{label:34} {0:>6}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in Config().__dict__.items():
        parser.add_argument(f"--{name}", type=type(value), default=value)
    parser.add_argument("--web", type=int, default=2, help="Daphne processes")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker")
    args = parser.parse_args()
    config = Config(**{k: getattr(args, k) for k in Config().__dict__})
    smtp = SmtpReceiver().start()
    with tempfile.TemporaryDirectory(prefix="rc-load-") as tmp:
        env = mail_env(smtp.port)
        stack = Stack(Path(tmp), web=args.web, workers=args.workers, threads=args.threads, lease_ttl=30, extra_env=env)
        try:
            stack.start()
            print(f"{dt.datetime.now():%Y-%m-%d %H:%M} load test")
            print(report(run(stack, config)))
        finally:
            stack.stop()
            smtp.stop()


if __name__ == "__main__":
    main()
