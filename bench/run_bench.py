"""Issue 8's benchmarks in one command: our engine and its peers in the same run on this machine.

Runs, one subprocess at a time (never in parallel):

1. our engine (``bench/ours.py``, the project's interpreter): variants ``memory``
   (``InMemoryStore``) and ``orm`` (the console's ORM store on SQLite), each in a fresh process
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
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers import common, run_peers  # noqa: E402

OURS = "reviewconsole"
OURS_MODULE = "bench.ours"
OURS_VARIANTS = ("memory", "orm")
OURS_MEMORY = f"{OURS}/memory"
OURS_ORM = f"{OURS}/orm"
IN_MEMORY_PEERS = ("langgraph/memory", "adk/memory", "maf/live", "maf/checkpoint")
"""Peers keeping sessions in the process: compared with ``reviewconsole/memory``."""
STORED_PEERS = ("langgraph/sqlite", "adk/sqlite", "maf/file")
"""Peers keeping sessions in SQLite or files: compared with ``reviewconsole/orm``."""
COUNTERPART = {**{p: OURS_MEMORY for p in IN_MEMORY_PEERS}, **{p: OURS_ORM for p in STORED_PEERS}}
KB = 1024
"""Bytes in the KB of the targets (and in KiB columns)."""


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
    common_args = [
        f"--sessions={args.sessions}",
        f"--reps={args.reps}",
        f"--loops={args.loops}",
        f"--warmup={args.warmup}",
    ]
    if args.loop_reps is not None:
        common_args.append(f"--loop-reps={args.loop_reps}")
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
# Figures
# --------------------------------------------------------------------------


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def draft_bytes_per_loop(k: int, reps: int) -> float:
    """Bytes of the draft texts themselves per revise loop, as the harness's loop sessions write
    them (session ``rep`` of k: complaint ``complaint_for(k * 1000 + rep)``; one copy per loop)."""
    from bench.ours import draft_bytes

    return statistics.fmean(draft_bytes(common.complaint_for(k * 1000 + rep), k) for rep in range(max(reps, 1)))


def collect(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One row of figures per ``system/variant``, in run order."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records:
        if "system" not in r or r.get("metric") in (None, "meta"):
            continue
        key = f"{r['system']}/{r['variant']}"
        row = rows.setdefault(key, {"loops": {}, "memory": [], "errors": []})
        metric = r["metric"]
        if metric in ("start", "resume"):
            row[metric] = r
        elif metric == "resume_after_loops":
            row["loops"][r["k"]] = r
        elif metric == "memory":
            row["memory"].append(r)
        elif metric == "storage_breakdown":
            row["breakdown"] = r
        elif metric == "error":
            row["errors"].append(r.get("error") or f"{r.get('module')} exited {r.get('returncode')}")
    for row in rows.values():
        mem = row.pop("memory")
        row["memory_runs"] = len(mem)
        row["rss"] = _median(m.get("rss_bytes_per_session") for m in mem)
        row["traced"] = _median(m.get("tracemalloc_bytes_per_session") for m in mem)
        row["storage_paused"] = _median(m.get("storage_bytes_per_session") for m in mem)
        ok = [lr for k, lr in sorted(row["loops"].items()) if lr.get("status") == "ok"]
        grown = [lr for lr in ok if lr.get("storage_growth_bytes_per_loop") is not None]
        row["growth"] = row["growth_k"] = row["beyond_drafts"] = None
        if grown:
            last = grown[-1]  # the most loops: the least page-size rounding
            row["growth"] = last["storage_growth_bytes_per_loop"]
            row["growth_k"] = last["k"]
            row["beyond_drafts"] = row["growth"] - draft_bytes_per_loop(last["k"], int(last.get("reps", 1)))
        row["flat"] = None
        if ok and ok[0]["k"] == 1 and len(ok) > 1:
            row["flat"] = (ok[-1]["k"], ok[-1]["cpu_ms"] / ok[0]["cpu_ms"])
    return rows


def _cpu(row: dict[str, Any] | None, metric: str) -> float | None:
    rec = (row or {}).get(metric)
    return None if rec is None else float(rec["cpu_ms_per_op"])


def _rate(row: dict[str, Any], metric: str) -> float | None:
    rec = row.get(metric)
    return None if rec is None else float(rec["ops_per_s"])


def _times(peer: float | None, ours: float | None) -> str:
    """``peer / ours`` as ``12.3×`` (how many times ours is faster or smaller), ``-`` if unknown."""
    if peer is None or ours is None or ours <= 0:
        return "-"
    return f"{peer / ours:.2f}×" if peer / ours < 10 else f"{peer / ours:.1f}×"


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_table(rows: dict[str, dict[str, Any]], ks: Sequence[int]) -> str:
    """The one table: a row per system/variant; the last columns compare each peer with ours."""
    head = [
        "system/variant",
        "start CPU ms",
        "starts/s",
        "resume CPU ms",
        "resumes/s",
        *[f"k={k} ms" for k in ks],
        "k max/k=1",
        "KiB/paused RSS",
        "KiB/paused traced",
        "B/paused stored",
        "B/loop stored",
        "B/loop beyond drafts",
        "vs ours: start",
        "resume",
        "RSS",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in rows.items():
        cells = [
            key + (" (ERROR)" if row["errors"] else ""),
            _f(_cpu(row, "start")),
            _f(_rate(row, "start"), 0),
            _f(_cpu(row, "resume")),
            _f(_rate(row, "resume"), 0),
        ]
        for k in ks:
            lr = row["loops"].get(k)
            if lr is None:
                cells.append("-")
            elif lr.get("status") == "ok":
                cells.append(_f(lr["cpu_ms"]))
            else:
                ext = lr.get("extrapolated_cpu_ms")
                cells.append("skipped" + (f" (≈{ext:,.0f} extrapolated)" if ext is not None else ""))
        cells.append("-" if row["flat"] is None else f"{row['flat'][1]:.2f} (k={row['flat'][0]})")
        cells.append(_f(row["rss"] and row["rss"] / KB, 1))
        cells.append(_f(row["traced"] and row["traced"] / KB, 1))
        cells.append(_f(row["storage_paused"], 0))
        cells.append(_f(row["growth"], 0))
        cells.append(_f(row["beyond_drafts"], 0))
        ours = rows.get(COUNTERPART.get(key, ""))
        if ours is None:
            cells += ["-", "-", "-"]
        else:
            cells.append(_times(_cpu(row, "start"), _cpu(ours, "start")))
            cells.append(_times(_cpu(row, "resume"), _cpu(ours, "resume")))
            cells.append(_times(row["rss"], ours["rss"]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "NOT met")


def targets(rows: dict[str, dict[str, Any]], console: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """``(target, figure, met | NOT met | n/a)`` for each of issue 8's targets."""
    out: list[tuple[str, str, str]] = []
    mem, orm = rows.get(OURS_MEMORY), rows.get(OURS_ORM)

    def faster(ours_key: str, ours: dict[str, Any] | None, peer: str, factor: float, metric: str) -> None:
        ours_ms, peer_ms = _cpu(ours, metric), _cpu(rows.get(peer), metric)
        name = f"{ours_key} {metric} ≥ {factor:g}× {peer}"
        if ours_ms is None or peer_ms is None:
            out.append((name, "not measured", _verdict(None)))
            return
        ratio = peer_ms / ours_ms
        out.append((name, f"{ratio:.2f}× ({ours_ms:.2f} vs {peer_ms:.2f} CPU ms)", _verdict(ratio >= factor)))

    for metric in ("start", "resume"):
        faster(OURS_MEMORY, mem, "langgraph/memory", 10, metric)
        peers = [(p, _cpu(rows.get(p), metric)) for p in (*IN_MEMORY_PEERS, *STORED_PEERS)]
        measured = [(p, ms) for p, ms in peers if ms is not None]
        best = min(measured, key=lambda pm: pm[1])[0] if measured else "maf/live"
        faster(OURS_MEMORY, mem, best, 5, metric)
    for metric in ("start", "resume"):
        faster(OURS_ORM, orm, "langgraph/sqlite", 3, metric)
        faster(OURS_ORM, orm, "maf/file", 3, metric)
    for key, row in ((OURS_MEMORY, mem), (OURS_ORM, orm)):
        name = f"{key} resume at k=1000 ≤ 1.2× k=1"
        lr1, lr1000 = (row or {}).get("loops", {}).get(1), (row or {}).get("loops", {}).get(1000)
        if not lr1 or not lr1000 or lr1000.get("status") != "ok":
            out.append((name, "not measured", _verdict(None)))
            continue
        ratio = lr1000["cpu_ms"] / lr1["cpu_ms"]
        tail = ""
        if lr1000.get("revise_tail_cpu_ms") and lr1.get("revise_tail_cpu_ms"):
            tail = f"; revise resumes {lr1000['revise_tail_cpu_ms'] / lr1['revise_tail_cpu_ms']:.2f}×"
        figure = f"{ratio:.2f}× ({lr1000['cpu_ms']:.2f} vs {lr1['cpu_ms']:.2f} CPU ms{tail})"
        out.append((name, figure, _verdict(ratio <= 1.2)))
    name = f"{OURS_MEMORY} ≤ 5 KB ({5 * KB} B) per paused session"
    if mem and mem["rss"] is not None:
        figure = f"{mem['rss']:,.0f} B peak RSS, {mem['traced']:,.0f} B traced"
        out.append((name, figure, _verdict(max(mem["rss"], mem["traced"] or 0) <= 5 * KB)))
    else:
        out.append((name, "not measured", _verdict(None)))
    name = f"{OURS_ORM} ≤ 3 KB ({3 * KB} B) stored per revise loop beyond the draft texts"
    if orm and orm["beyond_drafts"] is not None:
        drafts = orm["growth"] - orm["beyond_drafts"]
        figure = (
            f"{orm['beyond_drafts']:,.0f} B ({orm['growth']:,.0f} B file growth at k={orm['growth_k']} "
            f"− {drafts:,.0f} B of draft text)"
        )
        out.append((name, figure, _verdict(orm["beyond_drafts"] <= 3 * KB)))
    else:
        out.append((name, "not measured", _verdict(None)))
    if console is not None:
        from bench.bench_console import TARGETS_MS, target_figures

        for label, (figure, ms) in target_figures(console).items():
            limit = TARGETS_MS[label]
            out.append((f"console: {label} < {limit:g} ms", figure, _verdict(None if ms is None else ms < limit)))
    else:
        for label in ("webhook → websocket p95", "decision → next interrupt p95", "inbox page, 100,000 pending"):
            out.append((f"console: {label}", "not measured (--no-console or failed)", _verdict(None)))
    return out


def breakdown_lines(rows: dict[str, dict[str, Any]], top: int = 8) -> list[str]:
    orm = rows.get(OURS_ORM, {})
    b = orm.get("breakdown")
    if not b:
        return []
    tables = list(b["tables_bytes_per_loop"].items())
    parts = [f"{name} {v['payload']:,.0f}" for name, v in tables[:top]]
    rest = sum(v["payload"] for _, v in tables[top:])
    return [
        f"{OURS_ORM} storage per revise loop by table and index (one session, {b['loops']} loops; "
        f"row payload bytes, dbstat): {b['payload_growth_bytes_per_loop']:,.0f} B payload, "
        f"{b['file_growth_bytes_per_loop']:,.0f} B file; drafts themselves {b['draft_bytes_per_loop']:,.0f} B.",
        "  " + "; ".join(parts) + (f"; {len(tables) - top} more {rest:,.0f}" if tables[top:] else ""),
    ]


def report(
    rows: dict[str, dict[str, Any]],
    ks: Sequence[int],
    console: dict[str, Any] | None,
    meta: dict[str, Any],
    notes: Sequence[str],
) -> str:
    m = meta["machine"]
    cfg = meta["config"]
    lines = [
        f"# Benchmarks, {meta['date']}: commit {meta['commit']}",
        f"machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram_gib']} GiB RAM, Python {m['python']}, "
        f"Linux {m['kernel']}; load average {m['loadavg_1m']:.2f} at the start, "
        f"{meta.get('loadavg_end', float('nan')):.2f} at the end",
        f"config: {cfg['sessions']} sessions × {cfg['reps']} reps, k = {cfg['loops']} "
        f"({cfg['loop_reps'] or cfg['reps']} sessions per k, loop budget {cfg['loop_budget_s']:g} s per variant"
        + (f", {', '.join(cfg['loop_budget'])}" if cfg["loop_budget"] else "")
        + f"), {cfg['memory_runs']} memory run(s) per variant, {cfg['warmup']} warm-up sessions",
        "",
        format_table(rows, ks),
        "",
        "CPU ms = time.process_time() per operation, median of the reps (k columns: median of the sessions",
        "per k, one approve timed after k revise loops). /s = operations per wall-clock second.",
        "KiB/paused: growth of peak RSS and of the tracemalloc'd heap per paused session (500 paused, fresh",
        "process; median of the memory runs). B/loop stored: file growth per revise loop at the largest k",
        "measured (SQLite WAL folded in); beyond drafts: minus the bytes of one copy of each loop's draft.",
        "'vs ours': the peer's figure / ours (reviewconsole/memory for in-memory peers, reviewconsole/orm for",
        "SQLite and file peers): > 1 means ours is that many times faster / smaller.",
        "A 'skipped' k did not fit in the variant's loop budget (ADK replays its whole history on every",
        "resume, so driving a session to k loops costs O(k²)); its figure is a linear fit over the resumes",
        "measured, not a measurement.",
    ]
    extra = breakdown_lines(rows)
    if extra:
        lines += ["", *extra]
    errors = [f"{key}: {e}" for key, row in rows.items() for e in row["errors"]]
    if errors or notes:
        lines += ["", *[f"NOTE: {n}" for n in notes], *[f"ERROR: {e}" for e in errors]]
    if console is not None:
        from bench.bench_console import report as console_report

        lines += ["", console_report(console)]
    lines += ["", "## Targets (issue 8)", "", "| target | figure | status |", "|---|---|---|"]
    lines += [f"| {t} | {fig} | {status} |" for t, fig, status in targets(rows, console)]
    return "\n".join(lines)


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
