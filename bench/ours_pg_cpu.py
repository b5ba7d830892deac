"""Our durable path on PostgreSQL with the server's CPU beside the client's (issue 18, targets 2
and 4): per start (create a session, run it to its first pause) and per resume (approve, run to
completion), the benchmark process's CPU and the PostgreSQL server's, in CPU ms per operation,
the median of ``reps``.

The server's CPU is the postmaster's process tree read from ``/proc`` (``bench/proc_cpu.py``: live
backends and the reaped ones), so the server must run on this machine (loopback) and nothing else
should use it meanwhile; its clock tick (10 ms) needs a few hundred operations per rep. It is the
driver of ``bench/ours.py`` (``postgres`` variant: a fresh database copied from a migrated template
per rep, the email-review demo), timed around the starts and the resumes only.

Usage (the PostgreSQL URL as for ``bench/ours.py``; a role that may create databases)::

    BENCH_DATABASE_URL=postgres://user:pass@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/ours_pg_cpu.py --sessions 150 --reps 3

Prints one line: ``start <client> (server <server>) resume <client> (server <server>) ms``. Run it
from two trees (or with two settings) in turn, several rounds, and compare paired ratios
(bench/README.md, "Issue 18 targets 2 and 4: fewer statements per start, and server-side binding
measured with the server's CPU").
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import proc_cpu
from bench.ours import OursDriver
from bench.peers import common

WARMUP = 20
"""Untimed start-and-approve pairs per rep before the timed ones."""


def _postmaster() -> int:
    """The PostgreSQL server's root process: the parent of this connection's backend.

    Raises:
        SystemExit: the server is not on this machine (its backend's process is not in ``/proc``).
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    found = proc_cpu.stat(backend)
    if found is None:
        raise SystemExit("the PostgreSQL server is not on this machine: its CPU cannot be read")
    return found[0]


def measure(sessions: int, reps: int) -> dict[str, float]:
    """Median CPU ms per start and per resume, the client's and the server's."""
    rows: dict[str, list[float]] = {"start": [], "start_server": [], "resume": [], "resume_server": []}
    for rep in range(reps):
        driver = OursDriver("postgres")
        driver.open()
        try:
            server = _postmaster()
            for i in range(WARMUP):
                driver.start(f"w{i}", "The lid is loose")
                driver.resume(f"w{i}", common.APPROVE)
            ids = [f"s{rep}-{i}" for i in range(sessions)]
            for kind in ("start", "resume"):
                gc.collect()
                ticks, cpu = proc_cpu.tree_ticks([server]), time.process_time()
                for sid in ids:
                    if kind == "start":
                        driver.start(sid, "The lid is cracked")
                    else:
                        driver.resume(sid, common.APPROVE)
                cpu, ticks = time.process_time() - cpu, proc_cpu.tree_ticks([server]) - ticks
                rows[kind].append(cpu * 1000 / sessions)
                rows[f"{kind}_server"].append(ticks * proc_cpu.TICK * 1000 / sessions)
        finally:
            driver.close()
    return {name: statistics.median(values) for name, values in rows.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=150, help="timed sessions per rep (default 150)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions, each on a fresh database (default 3)")
    args = parser.parse_args(argv)
    if not (os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")):
        parser.error("set BENCH_DATABASE_URL (or DATABASE_URL) to a PostgreSQL server on this machine")
    figures = measure(args.sessions, args.reps)
    print(
        f"start {figures['start']:.3f} (server {figures['start_server']:.3f}) "
        f"resume {figures['resume']:.3f} (server {figures['resume_server']:.3f}) ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
