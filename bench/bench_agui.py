"""The AG-UI door of the real console, end to end: how soon a client sees a run.

``manage.py serve`` runs as a subprocess (``console_clients.Console``: Daphne, the in-process task
worker, SQLite in WAL mode, the in-memory channel layer, the offline draft model, the demo data;
the ``demo`` API client's token from ``DEMO_API_TOKEN``). This process is only a client: real HTTP
(``httpx``, the SSE read as it arrives). Each thread, one after another:

1. start: ``POST /agui/email-review/`` with a new ``threadId`` and a user message; timed from just
   before the POST to the first ``TEXT_MESSAGE_CONTENT`` (the draft's first streamed delta:
   ``first_delta``) and to ``RUN_FINISHED`` (the review interrupt: ``start_finished``);
2. resume: the same thread answering the interrupt with ``approve``; timed to ``RUN_FINISHED``
   (the session completed: ``resume_finished``).

p50 / p95 / p99 / max in milliseconds (nearest rank); ``--warmup`` threads first, untimed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_console import percentiles
from bench.console_clients import Console

TOKEN = "rc_agui-bench-token-0123456789abcdefghijklmnop"


def _body(thread_id: str, *, text: str | None = None, resume: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    messages = [{"id": f"m-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}] if text else []
    body: dict[str, Any] = {
        "threadId": thread_id,
        "runId": f"r-{uuid.uuid4().hex[:8]}",
        "state": {},
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    if resume is not None:
        body["resume"] = resume
    return body


def _run(http: Any, url: str, body: dict[str, Any]) -> tuple[float | None, float, dict[str, Any]]:
    """(ms to the first text delta or None, ms to the terminal event, the terminal event)."""
    started = time.perf_counter()
    first = None
    with http.stream("POST", url, json=body, headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            if event["type"] == "TEXT_MESSAGE_CONTENT" and first is None:
                first = (time.perf_counter() - started) * 1000
            if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                return first, (time.perf_counter() - started) * 1000, event
    raise RuntimeError("the stream ended without RUN_FINISHED or RUN_ERROR")


def run_threads(console: Console, threads: int, warmup: int) -> dict[str, Any]:
    import httpx

    url = f"{console.url}/agui/email-review/"
    samples: dict[str, list[float]] = {"first_delta": [], "start_finished": [], "resume_finished": []}
    with httpx.Client(timeout=60) as http:
        for n in range(warmup + threads):
            thread_id = f"bench-{uuid.uuid4().hex[:12]}"
            first, finished, last = _run(http, url, _body(thread_id, text=f"My battery drains fast ({n})"))
            [interrupt] = last["outcome"]["interrupts"]
            answer = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "approve"}]
            _, done, end = _run(http, url, _body(thread_id, resume=answer))
            if end["type"] != "RUN_FINISHED":
                raise RuntimeError(f"thread {thread_id}: {end}")
            if n >= warmup and first is not None:
                samples["first_delta"].append(first)
                samples["start_finished"].append(finished)
                samples["resume_finished"].append(done)
    return {name: percentiles(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=30, help="timed threads (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed threads first (default 3)")
    args = parser.parse_args(argv)
    os.environ["DEMO_API_TOKEN"] = TOKEN  # the demo command gives the demo client this token
    with tempfile.TemporaryDirectory(prefix="bench-agui-") as var:
        console = Console(Path(var))
        try:
            figures = run_threads(console, args.threads, args.warmup)
        finally:
            console.stop()
    for name, row in figures.items():
        print(f"{name:16} n={row['n']} " + " ".join(f"{q}={row[q]:.1f}" for q in ("p50", "p95", "p99", "max")) + " ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
