"""Server CPU per email-review session on the scale-out stack, Daphne and uvicorn side by side
(issue 18, target 4); loopback only, bounded in sessions and seconds per step.

One stack (``tests/scaleout/stack.py``: a fresh database on ``$DATABASE_URL``'s PostgreSQL, the
Redis of ``$REDIS_URL``, ``--workers`` workers) with, per server in ``--servers``, ``--web`` web
processes behind an nginx of their own; both fronts share the database, Redis and workers, so a
step differs only in its web tier. Steps alternate between the servers (the first server of a step
alternates too). Each step, for one server:

- ``--reviewers`` reviewers log in and open the live inbox (``/ws/inbox/``) through that front; a
  reviewer decides an item when its socket says ``interrupt.created`` for it (the item's id modulo
  the reviewers says which one): the session's first item gets feedback (``revise``), the revised
  draft an approval. No reviewer reads the inbox list: no polling.
- ``--senders`` threads send signed ``email-review`` webhooks at the step's offered rate (sessions
  per second, paced from the step's start), or as fast as they can in the capacity step.
- The step ends when all its sessions completed, or ``--drain`` seconds after its last webhook;
  the CPU of the server processes (``bench/proc_cpu.py``: web, workers, nginx, the whole
  PostgreSQL server, redis-server, from ``/proc``) over the step is divided by the sessions it
  completed.

Steps: ``capacity`` (``--sessions`` webhooks at once; its completed sessions per second is the
stack's **capacity**, reviewers' reaction included), then each of ``--rates`` (``rate × --seconds``
sessions, at most ``--sessions``), then ``half`` (half that server's capacity, for the latency
targets). Before the steps, ``--idle`` seconds of the idle stack give each server's idle CPU (the
workers' polling, heartbeats); "over idle" subtracts it.

Per step: offered and completed sessions/s, server CPU ms per completed session (total and per
process kind), this script's own CPU (the clients; not in the total), and p50 / p95 ms of webhook →
the deciding reviewer's socket, revise → the next item on the deciding reviewer's socket, and
approve → the session's completing commit (its ``updated_at``; same machine, same clock). Targets
(judged at the ``half`` step): CPU ≤ 50 ms per session, webhook → socket p95 < 100 ms, decision →
next item p95 < 150 ms. Every step also checks what was decided: each session's items decided
``revise`` then ``approve`` and nothing else (``errors`` otherwise; the script exits 1).

Usage (``DATABASE_URL`` a PostgreSQL server on this machine whose role may create databases,
``REDIS_URL`` a Redis on this machine)::

    python bench/load_cpu.py --rates 0.5,1,2 --seconds 40 --sessions 80

The CI runs it at a tiny size (``tests/scaleout/test_load_cpu.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import queue
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

from bench.load_cpu_report import report, step_figures  # noqa: E402
from bench.proc_cpu import CpuMeter, difference, own_cpu, stack_roots  # noqa: E402
from tests.inbox.smtp_receiver import SmtpReceiver  # noqa: E402
from tests.scaleout.clients import InboxSocket, Reviewer  # noqa: E402
from tests.scaleout.stack import Stack  # noqa: E402


@dataclass
class Config:
    servers: tuple[str, ...] = ("daphne", "uvicorn")
    rates: tuple[float, ...] = (0.5, 1.0, 2.0)
    """Offered webhook rates (sessions per second), one step each."""
    seconds: float = 30.0
    """Seconds of webhooks in a paced step (its sessions: ``rate × seconds``, at most ``sessions``)."""
    sessions: int = 60
    """Sessions of the capacity step, and at most of any step."""
    drain: float = 60.0
    """Seconds a step waits, after its last webhook, for its sessions to complete."""
    reviewers: int = 4
    senders: int = 4
    idle: float = 5.0
    """Seconds of idle CPU measured per server before the steps (0: none)."""
    capacity: bool = True
    """Run the capacity step and the half-capacity step."""


@dataclass
class Session:
    """One session as the clients saw it; times from ``time.monotonic()``, ``*_wall`` from ``time.time()``."""

    sent: float | None = None
    told: list[float] = field(default_factory=list)  # its items on the deciding reviewers' sockets
    items: list[int] = field(default_factory=list)
    revised: float | None = None
    approved: float | None = None
    approved_wall: float | None = None


@dataclass
class Step:
    """What one step's threads saw."""

    server: str
    name: str
    rate: float | None  # offered sessions/s; None: as fast as the senders go
    count: int
    sessions: dict[str, Session] = field(default_factory=dict)
    accepted: int = 0
    approvals: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    progress: threading.Event = field(default_factory=threading.Event)

    def session(self, sid: str) -> Session:
        """Its record (made on first sight: a socket may tell of it before the webhook's answer)."""
        return self.sessions.setdefault(sid, Session())


def _send(stack: Stack, step: Step, todo: list[int], started: float, stop: threading.Event) -> None:
    with stack.client() as client:
        while not stop.is_set():
            with step.lock:
                if not todo:
                    return
                n = todo.pop(0)
            if step.rate and stop.wait(max(0.0, started + n / step.rate - time.monotonic())):
                return
            t0 = time.monotonic()
            body = {"complaint": f"Load test complaint {step.server} {step.name} {n}"}
            response = stack.send_webhook(client, "email-review", body)
            with step.lock:
                if response.status_code == 202:
                    step.session(response.json()["session_id"]).sent = t0
                    step.accepted += 1
                else:
                    step.errors.append(f"webhook {response.status_code}")
                step.progress.set()


def _review(person: Reviewer, index: int, count: int, told: queue.Queue[Any], step: Step) -> None:
    """Decide this reviewer's items as its socket tells of them; ``None`` on ``told`` ends it."""
    while (got := told.get()) is not None:
        seen, message = got
        item = message.get("item") or {}
        if message.get("event") != "interrupt.created" or item.get("workflow") != "email-review":
            continue
        if item["id"] % count != index:
            continue
        with step.lock:
            record = step.session(item["session_id"])
            record.told.append(seen)
            record.items.append(item["id"])
            rounds = len(record.items)
        if rounds > 2:
            with step.lock:
                step.errors.append(f"session {item['session_id']}: item {rounds} (one revise, one approve expected)")
            continue
        action, feedback = ("revise", "shorter") if rounds == 1 else ("approve", "")
        t0, wall = time.monotonic(), time.time()
        response = person.decide(item["id"], action, feedback)
        with step.lock:
            if response.status_code != 302:
                step.errors.append(f"decide {action} {response.status_code}")
            elif action == "revise":
                record.revised = t0
            else:
                record.approved, record.approved_wall = t0, wall
                step.approvals += 1
            step.progress.set()


def _wait(stack: Stack, step: Step, senders: list[threading.Thread], deadline: float) -> tuple[int, float]:
    """Until every accepted session completed or ``deadline``; ``(completed, when)``.

    Waits on the reviewers' approvals (no database reads) and only then reads the sessions'
    status, every 50 ms, until the last approval's run has committed."""
    while time.monotonic() < deadline:
        step.progress.wait(max(0.0, min(0.5, deadline - time.monotonic())))
        step.progress.clear()
        with step.lock:
            if not any(t.is_alive() for t in senders) and step.approvals >= step.accepted:
                break
    completed = 0
    while True:
        with step.lock:
            sids = [sid for sid, s in step.sessions.items() if s.sent is not None]
        completed = stack.count_status(sids, "completed") if sids else 0
        if completed >= step.accepted or time.monotonic() >= deadline:
            return completed, time.monotonic()
        threading.Event().wait(0.05)


def run_step(stack: Stack, names: list[str], roots: dict[str, list[int]], step: Step, config: Config) -> dict[str, Any]:
    """Run ``step`` through its server's front; returns its figures (``load_cpu_report.step_figures``)."""
    stack.use(step.server)
    people = [Reviewer(stack, name).login() for name in names]
    queues: list[queue.Queue[Any]] = [queue.Queue() for _ in people]
    sockets = [
        InboxSocket(stack, p, on_message=lambda t, m, q=q: q.put((t, m))) for p, q in zip(people, queues, strict=True)
    ]
    for q in queues:  # each socket's hello: joined its queues' groups, so no item is missed
        _, hello = q.get(timeout=30)
        assert hello.get("event") == "hello", hello
    reviewers = [
        threading.Thread(target=_review, args=(p, n, len(people), queues[n], step)) for n, p in enumerate(people)
    ]
    for thread in reviewers:
        thread.start()
    meter, stop, todo = CpuMeter(roots), threading.Event(), list(range(step.count))
    load = os.getloadavg()[0]
    before, client_before = meter.sample(), own_cpu()
    started = before["at"]
    senders = [
        threading.Thread(target=_send, args=(stack, step, todo, started, stop))
        for _ in range(min(config.senders, step.count))
    ]
    for thread in senders:
        thread.start()
    sending = step.count / step.rate if step.rate else 0.0
    completed, ended = _wait(stack, step, senders, started + sending + config.drain)
    after, client_after = meter.sample(), own_cpu()
    stop.set()
    for thread in senders:
        thread.join(30)
    for q in queues:
        q.put(None)
    for thread in reviewers:
        thread.join(30)
    for socket in sockets:
        socket.close()
    for person in people:
        person.close()
    cpu = difference(before, after)
    return step_figures(stack, step, completed, ended - started, cpu, client_after - client_before, load)


def idle_cpu(roots: dict[str, list[int]], seconds: float) -> dict[str, float]:
    """CPU seconds per second of each kind (and ``total``) over ``seconds`` with no load."""
    meter = CpuMeter(roots)
    before = meter.sample()
    threading.Event().wait(seconds)
    cpu = difference(before, meter.sample())
    return {key: value / cpu["at"] for key, value in cpu.items() if key != "at"}


def run(stack: Stack, config: Config) -> dict[str, Any]:
    """Every step for every server of ``config.servers`` (fronts of ``stack``), alternating; the figures:
    ``{"servers": {server: {"idle": {kind: CPU s/s, "total"} (empty when ``config.idle`` is 0),
    "capacity": sessions/s | None, "steps": [step figures, each with "idle_cpu": the idle total]}},
    "config": config's fields, "stack": {"web": processes per front, "workers": n}}``."""
    names = stack.create_reviewers(config.reviewers, queues=("support",))
    roots = {server: stack_roots(stack, server) for server in config.servers}
    out: dict[str, Any] = {server: {"idle": {}, "capacity": None, "steps": []} for server in config.servers}
    if config.idle > 0:
        for server in config.servers:
            out[server]["idle"] = idle_cpu(roots[server], config.idle)
    plan: list[tuple[str, float | None]] = [("capacity", None)] if config.capacity else []
    plan += [(f"{rate:g}/s", rate) for rate in config.rates]
    plan += [("half", None)] if config.capacity else []
    for n, (name, rate) in enumerate(plan):
        order = config.servers if n % 2 == 0 else tuple(reversed(config.servers))
        for server in order:
            if name == "capacity":
                count = config.sessions
            else:
                if name == "half":
                    rate = max(0.05, (out[server]["capacity"] or 0.0) / 2)
                assert rate is not None
                count = max(1, min(config.sessions, round(rate * config.seconds)))
            step = Step(server, name, rate, count)
            figures = run_step(stack, names, roots[server], step, config)
            figures["idle_cpu"] = out[server]["idle"].get("total")
            out[server]["steps"].append(figures)
            if name == "capacity":
                out[server]["capacity"] = figures["completed_per_s"]
    return {
        "servers": out,
        "config": config.__dict__,
        "stack": {"web": len(stack.front.webs), "workers": len(stack.workers)},
    }


def mail_env(port: int) -> dict[str, str]:
    """The stack's environment for its new-item mails to go to an SMTP server on loopback ``port``
    (the demo's queue members have addresses: without a server each mail fails, with a traceback)."""
    return {
        "REVIEWCONSOLE_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "REVIEWCONSOLE_EMAIL_HOST": "127.0.0.1",
        "REVIEWCONSOLE_EMAIL_PORT": str(port),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Config()
    parser.add_argument("--servers", default=",".join(defaults.servers), help="comma-separated: daphne,uvicorn")
    parser.add_argument("--rates", default=",".join(f"{r:g}" for r in defaults.rates), help="sessions/s, e.g. 1,2,4")
    for name in ("seconds", "sessions", "drain", "reviewers", "senders", "idle"):
        value = getattr(defaults, name)
        parser.add_argument(f"--{name}", type=type(value), default=value)
    parser.add_argument("--no-capacity", action="store_true", help="skip the capacity and half-capacity steps")
    parser.add_argument("--web", type=int, default=2, help="web processes per server")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker")
    args = parser.parse_args()
    config = Config(
        servers=tuple(s for s in args.servers.split(",") if s),
        rates=tuple(float(r) for r in args.rates.split(",") if r),
        capacity=not args.no_capacity,
        **{k: getattr(args, k) for k in ("seconds", "sessions", "drain", "reviewers", "senders", "idle")},
    )
    smtp = SmtpReceiver().start()
    with tempfile.TemporaryDirectory(prefix="rc-load-cpu-") as tmp:
        stack = Stack(
            Path(tmp),
            web=args.web,
            workers=args.workers,
            threads=args.threads,
            lease_ttl=30,
            extra_env=mail_env(smtp.port),
            web_servers=config.servers,
        )
        try:
            stack.start()
            print(f"{dt.datetime.now():%Y-%m-%d %H:%M} load_cpu on {os.cpu_count()} CPUs", flush=True)
            figures = run(stack, config)
        finally:
            stack.stop()
            smtp.stop()
    print(report(figures))
    errors = [e for s in figures["servers"].values() for step in s["steps"] for e in step["errors"]]
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
