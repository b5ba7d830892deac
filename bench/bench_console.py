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
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.console_clients import (  # noqa: E402
    WAIT,
    Console,
    InboxSocket,
    Reviewer,
    _session_rows,
    _wait_completed,
    console_env,
    send_webhook,
)

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
        from bench import bench_inbox

        bench_inbox.prepare()
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
