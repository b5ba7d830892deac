"""The review-request API end to end (issue 14): an agent's ``ask`` to the reviewer's screen, and
the reviewer's decision to the agent's ``wait`` returning.

``manage.py serve`` runs as a subprocess on a throwaway ``REVIEWCONSOLE_VAR_DIR``
(:class:`~bench.console_clients.Console`: Daphne, the in-process task worker, SQLite in WAL mode,
the in-memory channel layer, the demo users and queues, the ``demo`` API client with a known token
through ``DEMO_API_TOKEN``). This process is only a client: the agent is the real
``reviewconsole_client.Client`` over HTTP, the person the demo ``reviewer`` (the support queue)
logged in through the login form, holding ``/ws/inbox/`` open (:class:`~bench.console_clients.InboxSocket`).

Each review, one after another (so each latency is the console's own, not a queue's):

1. ask → reviewer's screen: from just before ``Client.ask(...)`` (``POST /api/v1/reviews``, a
   ``confirm`` review in the support queue) to the ``interrupt.created`` message for the review's
   item (its ``session_id``) on the reviewer's websocket;
2. decision → wait returns: a thread is blocked in ``Client.wait(review)`` (its long-poll
   ``GET /api/v1/reviews/{id}?wait=…`` was sent; then the reviewer opens the item's page, untimed,
   which the console serves while the long-poll is held); from just before the reviewer posts the
   item's decision form as the browser does (its fields and CSRF token, ``action=approve``) to
   ``wait`` returning the review ``decided`` with that approval;
3. decision POST answered: the 302 of that POST (server time plus loopback).

p50 / p95 / p99 / max in milliseconds (nearest rank). ``--warmup`` reviews run first, untimed.
Every record (per review: both latencies, the number of long-poll requests ``wait`` made) goes
to ``--json``.

Usage::

    python bench/bench_reviews.py                          # 200 reviews
    python bench/bench_reviews.py --reviews 5 --json /tmp/reviews.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime as dt
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_console import percentiles  # noqa: E402
from bench.console_clients import WAIT, Console, InboxSocket, Reviewer  # noqa: E402

TOKEN = "rc_bench-reviews-token-0123456789abcdefghijklmn"
"""The ``demo`` API client's token in the throwaway console (``DEMO_API_TOKEN``)."""
QUEUE = "support"
"""The demo queue the reviews go to: the demo ``reviewer``'s."""


class Waiter:
    """The agent's side that waits: a ``Client`` of its own, :meth:`start` runs ``wait`` on a thread.

    Its ``httpx.Client`` notes each long-poll request as it is sent (an event hook), so the
    bench knows ``wait`` is blocked on the server before the decision is posted.
    """

    def __init__(self, url: str) -> None:
        import httpx
        from reviewconsole_client import Client

        self.sent = threading.Event()
        self.requests = 0
        self.http = httpx.Client(event_hooks={"request": [self._sent]})
        self.client = Client(url, TOKEN, http=self.http)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wait")

    def _sent(self, request: Any) -> None:
        if request.method == "GET" and "wait=" in str(request.url):
            self.requests += 1
            self.sent.set()

    def start(self, review: Any) -> concurrent.futures.Future[tuple[float, Any, int]]:
        """``wait(review)`` on the thread; returns once its first long-poll request was sent.
        The future gives ``(time wait returned, the review it returned, long-poll requests made)``."""
        self.sent.clear()
        self.requests = 0

        def run() -> tuple[float, Any, int]:
            done = self.client.wait(review, timeout=WAIT)
            return time.perf_counter(), done, self.requests

        future = self.pool.submit(run)
        if not self.sent.wait(WAIT):
            raise TimeoutError(f"wait({review.id}) sent no long-poll within {WAIT} s")
        return future

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.client.close()
        self.http.close()


def run_reviews(console: Console, reviews: int, warmup: int) -> dict[str, Any]:
    """Drive ``warmup + reviews`` reviews through the console; latencies in ms, and the records."""
    from reviewconsole_client import Client

    reviewer = Reviewer(console)
    sock = InboxSocket(console, reviewer)
    agent = Client(console.url, TOKEN)
    waiter = Waiter(console.url)
    records: list[dict[str, Any]] = []
    cursor = 0
    started = time.perf_counter()
    try:
        for n in range(warmup + reviews):
            t0 = time.perf_counter()
            review = agent.ask(
                title=f"Refund $25 for order B-{n}?",
                message=f"Bench review {n}: the customer says the parcel arrived broken.",
                queue=QUEUE,
                payload={"order_id": f"B-{n}", "amount": 25},
            )
            t_asked = time.perf_counter()
            seen, pk, cursor = sock.wait_for(review.session_id, after=cursor)

            waiting = waiter.start(review)
            fields = reviewer.decision_form(pk)
            fields.update(action="approve")
            t1 = time.perf_counter()
            status = reviewer.decide(pk, fields)
            t1_done = time.perf_counter()
            if status != 302:
                raise RuntimeError(f"approve of item {pk} (review {review.id}): {status}")
            returned, decided, polls = waiting.result(timeout=WAIT)
            decision = decided.decision
            if decided.status != "decided" or decision is None or decision.action != "approve":
                raise RuntimeError(f"wait({review.id}) returned {decided.status} / {decision}")
            if n >= warmup:
                records.append(
                    {
                        "review": review.id,
                        "item": pk,
                        "ask_to_screen_ms": (seen - t0) * 1000,
                        "ask_answered_ms": (t_asked - t0) * 1000,
                        "decision_to_wait_ms": (returned - t1) * 1000,
                        "decision_post_ms": (t1_done - t1) * 1000,
                        "long_polls": polls,
                        "decided_by": decision.by,
                    }
                )
    finally:
        elapsed = time.perf_counter() - started
        waiter.close()
        agent.close()
        sock.close()
        reviewer.close()
    figures: dict[str, Any] = {"reviews": reviews, "warmup": warmup, "elapsed_s": elapsed}
    for key, _ in LATENCIES:
        figures[key] = percentiles([r[key] for r in records])
    figures["records"] = records
    return figures


LATENCIES = [
    ("ask_to_screen_ms", "ask → interrupt.created on the reviewer's websocket"),
    ("decision_to_wait_ms", "decision → wait returns the decision"),
    ("ask_answered_ms", "ask answered (201)"),
    ("decision_post_ms", "decision POST answered (302)"),
]


def report(figures: dict[str, Any]) -> str:
    """The figures as Markdown."""
    load = figures.get("load_average")
    lines = [
        "## Review requests on the embedded default",
        "",
        f"`manage.py serve` (Daphne, in-process task worker, SQLite WAL, in-memory channel layer): "
        f"{figures['reviews']} reviews one after another ({figures['warmup']} warm-up first), each "
        f"`Client.ask`, the reviewer's approval in the inbox and `Client.wait`, in {figures['elapsed_s']:.1f} s"
        + (f"; load average {load[0]:.2f} at the start, {load[1]:.2f} at the end." if load else "."),
        "",
        "| latency (ms) | n | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in LATENCIES:
        p = figures[key]
        if p["n"]:
            lines.append(f"| {label} | {p['n']} | {p['p50']:.1f} | {p['p95']:.1f} | {p['p99']:.1f} | {p['max']:.1f} |")
        else:
            lines.append(f"| {label} | 0 | - | - | - | - |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reviews", type=int, default=200, help="timed reviews (default 200)")
    p.add_argument("--warmup", type=int, default=5, help="untimed reviews first (default 5)")
    p.add_argument("--json", type=Path, help="write the figures and every record as JSON to this file")
    args = p.parse_args(argv)

    figures: dict[str, Any] = {"date": f"{dt.datetime.now():%Y-%m-%d %H:%M}"}
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-reviews-") as tmp:
        console = Console(Path(tmp), env={"DEMO_API_TOKEN": TOKEN})
        try:
            figures.update(run_reviews(console, args.reviews, args.warmup))
        except Exception:
            with contextlib.suppress(OSError):
                sys.stderr.write(console.log.read_text()[-4000:])
            raise
        finally:
            console.stop()
    figures["load_average"] = [load_start, os.getloadavg()[0]]
    print(report(figures), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
