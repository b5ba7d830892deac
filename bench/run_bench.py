"""Issue 8's benchmarks in one command: our engine and its peers in the same run on this machine.

Runs, one subprocess at a time (never in parallel):

1. our engine (``bench/ours.py``, the project's interpreter): variants ``memory``
   (``InMemoryStore``) and ``orm`` (the console's ORM store on SQLite), and ``postgres`` (the same
   store on PostgreSQL) when ``$BENCH_DATABASE_URL`` names a server (``postgres://…``, a role
   with CREATEDB; LangGraph's ``PostgresSaver`` then runs on it too), each in a fresh process
   for start / resume / resume after k loops, then ``--memory-runs`` fresh processes for the
   memory per paused session, plus one for the ORM store's storage per table
   (``--storage-breakdown``);
2. the peers (``bench/peers/run_peers.py``: LangGraph 1.2, Google ADK 2.13, Microsoft Agent
   Framework 1.23 in their own virtualenv ``bench/.peers-venv``, created here when missing), the
   same way, on the same harness (``bench/peers/common.py``);
3. the console on the embedded default (``bench/bench_console.py``: webhook → websocket,
   decision → next interrupt or completion, the inbox page with 100,000 pending items), unless
   ``--no-console``.

Then it prints one table (per system/variant: CPU ms and rates of start and resume, the resume
after k revise loops, memory and storage per paused session, storage per revise loop, and how
many times faster / smaller ours is than each peer), the console's latencies, and the issue's
targets next to the figures with whether each is met. Every JSON record goes to ``--out``.

Usage::

    python bench/run_bench.py                                   # full size, ≈ 20–25 min on 2 vCPU
    python bench/run_bench.py --sessions 10 --reps 1 --loops 1,10 --loop-reps 1 --warmup 2 \\
        --memory-runs 1 --breakdown-loops 10 --console-sessions 5 --inbox-items 2000   # ≈ 1 min
    python bench/run_bench.py --peers no --no-console           # ours only

See ``bench/README.md`` for what each figure means and the figures measured on our machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.figures import OURS, collect, report, targets  # noqa: E402
from bench.peers import run_peers  # noqa: E402

OURS_MODULE = "bench.ours"
OURS_VARIANTS = ("memory", "orm", "postgres")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Where and what we measure
# --------------------------------------------------------------------------


def commit_id() -> str:
    """The commit measured: ``$REVIEWCONSOLE_BENCH_COMMIT``, else git's HEAD (``+dirty`` when
    ``engine/`` or ``reviewconsole/`` differ from it), else ``unknown``."""
    if os.environ.get("REVIEWCONSOLE_BENCH_COMMIT"):
        return os.environ["REVIEWCONSOLE_BENCH_COMMIT"]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "engine", "reviewconsole"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine() -> dict[str, Any]:
    """CPUs usable here (``nproc``), CPU model, RAM, Python, kernel, load."""
    cpu = platform.processor() or "unknown"
    ram = 0
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
        with open("/proc/meminfo", encoding="utf-8") as f:
            ram = next((int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:")), 0)
    except OSError:
        pass
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "nproc": nproc,
        "cpu": cpu,
        "ram_gib": round(ram / 2**30, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg_1m": os.getloadavg()[0],
    }


def peers_venv_ready(venv: Path = run_peers.DEFAULT_VENV) -> bool:
    """Whether the peers' venv exists and matches ``bench/peers/requirements.txt`` (no install)."""
    import hashlib

    stamp = venv / run_peers.STAMP_NAME
    want = hashlib.sha256(run_peers.REQUIREMENTS.read_bytes()).hexdigest()
    return run_peers.venv_python(venv).exists() and stamp.exists() and stamp.read_text().strip() == want


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


def _selected(only: Sequence[str], system: str, variant: str) -> bool:
    if variant == "postgres" and not os.environ.get("BENCH_DATABASE_URL"):
        return False  # the PostgreSQL variants run only on a server named for them
    return not only or system in only or f"{system}/{variant}" in only


def run_variant(
    python: Path | str,
    module: str,
    system: str,
    variant: str,
    args: argparse.Namespace,
    budget: float,
    env: dict[str, str],
) -> list[dict[str, Any]]:
    """Timing metrics in one fresh process, then ``--memory-runs`` fresh processes for memory."""
    common_args = run_peers.shared_args(args)
    records = run_peers.run_module(
        python,
        module,
        [f"--variant={variant}", "--metrics=start_resume,loops", f"--loop-budget-s={budget}", *common_args],
        env=env,
    )
    for run in range(args.memory_runs):
        memory_args = [f"--variant={variant}", "--metrics=memory", *common_args]
        for rec in run_peers.run_module(python, module, memory_args, env=env):
            rec.setdefault("memory_run", run)
            records.append(rec)
    for rec in records:  # an error record from run_module names no system
        rec.setdefault("system", system)
        rec.setdefault("variant", variant)
    return records


def run_all(args: argparse.Namespace, env: dict[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Ours, then the peers; returns the records and notes for the report."""
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for variant in OURS_VARIANTS:
        if _selected(args.only, OURS, variant):
            records += run_variant(sys.executable, OURS_MODULE, OURS, variant, args, args.loop_budget_s, env)
    if _selected(args.only, OURS, "orm") and args.breakdown_loops > 0:
        records += run_peers.run_module(
            sys.executable, OURS_MODULE, ["--storage-breakdown", str(args.breakdown_loops)], env=env
        )
    if args.peers == "no":
        notes.append("peers not run (--peers no)")
        return records, notes
    try:
        if args.peers == "auto" and not peers_venv_ready(args.venv):
            raise RuntimeError(f"{args.venv} is not ready (run: python bench/peers/run_peers.py --setup-only)")
        py = run_peers.ensure_venv(args.venv)
    except (RuntimeError, OSError, subprocess.CalledProcessError, SystemExit) as exc:
        if args.peers == "yes":
            raise
        notes.append(f"peers not run: {exc}")
        _log(f"peers not run: {exc}")
        return records, notes
    budgets = {name: args.loop_budget_s for name in run_peers.PEERS}
    for item in args.loop_budget:
        name, _, value = item.partition("=")
        if name not in budgets or not value:
            raise SystemExit(f"--loop-budget expects SYSTEM=SECONDS with SYSTEM in {list(budgets)}")
        budgets[name] = float(value)
    for system, (module, variants) in run_peers.PEERS.items():
        if system in run_peers.POSTGRES_PEERS:
            variants = (*variants, run_peers.POSTGRES_PEERS[system])
        for variant in variants:
            if _selected(args.only, system, variant):
                records += run_variant(py, module, system, variant, args, budgets[system], env)
    return records, notes


def run_console(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any] | None:
    """``bench/bench_console.py`` in a subprocess; returns its figures (``None`` if it failed)."""
    with tempfile.TemporaryDirectory(prefix="bench-console-out-") as tmp:
        out = Path(tmp) / "console.json"
        cmd = [
            sys.executable,
            str(ROOT / "bench" / "bench_console.py"),
            f"--sessions={args.console_sessions}",
            f"--inbox-items={args.inbox_items}",
            f"--json={out}",
        ]
        _log("$ " + " ".join(cmd))
        # Its own report goes to stderr here: run_bench prints the figures in its own output.
        proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=sys.stderr)
        if proc.returncode != 0 or not out.exists():
            _log(f"bench_console.py failed (exit {proc.returncode})")
            return None
        return dict(json.loads(out.read_text()))


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sessions", type=int, default=500, help="sessions per rep (start, resume, memory)")
    p.add_argument("--reps", type=int, default=3, help="reps of start/resume (median), default 3")
    p.add_argument("--loops", default="1,10,100,1000", help="revise loops k (default 1,10,100,1000)")
    p.add_argument("--loop-reps", type=int, default=None, help="sessions per k (default --reps)")
    p.add_argument("--loop-budget-s", type=float, default=120.0, help="wall s for the loops of a variant (120)")
    p.add_argument(
        "--loop-budget", action="append", default=[], metavar="SYSTEM=SECONDS", help="per peer, e.g. adk=600"
    )
    p.add_argument("--warmup", type=int, default=20, help="untimed warm-up sessions per process (20)")
    p.add_argument("--memory-runs", type=int, default=3, help="fresh processes for memory per variant (3)")
    p.add_argument("--breakdown-loops", type=int, default=200, help="loops of ours' storage breakdown (0: skip)")
    p.add_argument(
        "--peers",
        choices=("yes", "no", "auto"),
        default="yes",
        help="yes: create the peers' venv when needed (default); auto: only if it is ready; no: ours only",
    )
    p.add_argument("--venv", type=Path, default=run_peers.DEFAULT_VENV, help="the peers' venv")
    p.add_argument("--only", action="append", default=[], help="SYSTEM or SYSTEM/VARIANT (repeatable)")
    p.add_argument("--no-console", action="store_true", help="skip bench_console.py")
    p.add_argument("--console-sessions", type=int, default=200, help="sessions through the console (200)")
    p.add_argument("--inbox-items", type=int, default=100_000, help="pending items for the inbox page (100,000)")
    p.add_argument("--out", type=Path, help="write every JSON record (and a summary) to this file")
    args = p.parse_args(argv)

    meta: dict[str, Any] = {
        "date": f"{dt.datetime.now():%Y-%m-%d %H:%M}",
        "commit": commit_id(),
        "machine": machine(),
        "config": {
            k: getattr(args, k)
            for k in ("sessions", "reps", "loops", "loop_reps", "loop_budget_s", "loop_budget", "memory_runs", "warmup")
        },
    }
    env = {"REVIEWCONSOLE_BENCH_COMMIT": meta["commit"]}
    _log(f"run_bench: commit {meta['commit']}, {meta['machine']['nproc']} CPUs, {meta['machine']['cpu']}")
    records, notes = run_all(args, env)
    console = None if args.no_console else run_console(args, env)
    if not args.no_console and console is None:
        notes.append("bench_console.py failed; see its output above")
    meta["loadavg_end"] = os.getloadavg()[0]
    rows = collect(records)
    ks = sorted({int(k) for k in args.loops.split(",") if k.strip()})
    text = report(rows, ks, console, meta, notes)
    print(text, flush=True)
    if args.out:
        with args.out.open("w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")
            summary = {"metric": "summary", **meta, "console": console, "targets": targets(rows, console)}
            f.write(json.dumps(summary) + "\n")
    failed = any(row["errors"] for row in rows.values()) or (not args.no_console and console is None)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
