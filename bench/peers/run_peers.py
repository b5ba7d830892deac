"""Create the peers virtualenv and run every peer benchmark in its own subprocess.

Runs with any Python >= 3.10 and only the stdlib, so it can be called from the
project venv. For each system/variant it starts one subprocess for the timing
metrics (start/resume, resume after k loops) and a fresh one for the memory
metric, using the peers venv's interpreter. All JSON-line records are written
to ``--out`` (and to stdout unless ``--quiet``); a summary table goes to stderr.

Reusable pieces for the project-side orchestrator: :func:`ensure_venv`,
:func:`run_module`, :func:`format_table`.

Examples::

    python bench/peers/run_peers.py --setup-only
    python bench/peers/run_peers.py --sessions 20 --reps 1 --loops 1,10 --out /tmp/peers.jsonl
    python bench/peers/run_peers.py --out bench-peers.jsonl --loop-budget adk=300
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_VENV = REPO_ROOT / "bench" / ".peers-venv"
REQUIREMENTS = HERE / "requirements.txt"
STAMP_NAME = ".peers-requirements.sha256"
PYENV_312 = Path("/root/.pyenv/versions/3.12.1/bin/python")

PEERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "langgraph": ("bench.peers.langgraph_peer", ("memory", "sqlite")),
    "adk": ("bench.peers.adk_peer", ("memory", "sqlite")),
    "maf": ("bench.peers.maf_peer", ("live", "checkpoint", "file")),
}
"""system -> (module, variants), in run order."""

POSTGRES_PEERS: dict[str, str] = {"langgraph": "postgres"}
"""system -> its PostgreSQL variant, run by ``run_bench.py`` only when ``$BENCH_DATABASE_URL`` names
a server (``langgraph-checkpoint-postgres``'s ``PostgresSaver``, beside ours on the same one)."""


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _default_base_python() -> str:
    """Interpreter used to create the venv: ``$PEERS_PYTHON``, pyenv 3.12.1, or python3.12."""
    env = os.environ.get("PEERS_PYTHON")
    if env:
        return env
    if PYENV_312.exists():
        return str(PYENV_312)
    found = shutil.which("python3.12")
    if found:
        return found
    raise SystemExit("no Python 3.12 found; set PEERS_PYTHON")


def venv_python(venv_dir: Path) -> Path:
    """Path of the interpreter inside ``venv_dir``."""
    return venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(
    venv_dir: Path = DEFAULT_VENV,
    base_python: str | None = None,
    requirements: Path = REQUIREMENTS,
    force: bool = False,
) -> Path:
    """Create/refresh the peers venv and return its interpreter.

    The venv is (re)installed when it is missing, when ``requirements`` changed
    since the last install (sha256 stamp inside the venv), or when ``force``.
    """
    req_hash = hashlib.sha256(requirements.read_bytes()).hexdigest()
    stamp = venv_dir / STAMP_NAME
    py = venv_python(venv_dir)
    if not force and py.exists() and stamp.exists() and stamp.read_text().strip() == req_hash:
        return py
    base = base_python or _default_base_python()
    if not py.exists() or force:
        _log(f"creating peers venv {venv_dir} with {base}")
        if venv_dir.exists() and force:
            shutil.rmtree(venv_dir)
        subprocess.run([base, "-m", "venv", str(venv_dir)], check=True)
    _log(f"installing {requirements.name} into {venv_dir}")
    pip = [str(py), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-r", str(requirements)], check=True)
    stamp.write_text(req_hash + "\n")
    return py


def run_module(
    python: Path | str,
    module: str,
    args: Sequence[str],
    cwd: Path = REPO_ROOT,
    env: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run ``python -m module args`` and return the JSON records it printed.

    stderr is passed through live; non-JSON stdout lines are echoed to stderr.
    A non-zero exit adds an ``{"metric": "error"}`` record instead of raising.
    """
    cmd = [str(python), "-m", module, *args]
    _log("$ " + " ".join(cmd))
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        text=True,
    )
    records: list[dict[str, Any]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.strip()
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            _log(line)
    rc = proc.wait()
    if rc != 0:
        records.append({"metric": "error", "module": module, "args": list(args), "returncode": rc})
    return records


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_table(records: Iterable[dict[str, Any]], baseline: str | None = None) -> str:
    """Render a Markdown table (one row per system/variant) with ratios to ``baseline``.

    ``baseline`` is ``"system/variant"``; default: the first row. Ratios are
    CPU-ms ratios (row / baseline), so > 1 means slower than the baseline.
    """
    rows: dict[str, dict[str, Any]] = {}
    ks: set[int] = set()
    for r in records:
        if "system" not in r:
            continue
        key = f"{r['system']}/{r['variant']}"
        row = rows.setdefault(key, {"loops": {}})
        metric = r.get("metric")
        if metric in ("start", "resume"):
            row[metric] = r
        elif metric == "resume_after_loops":
            ks.add(r["k"])
            row["loops"][r["k"]] = r
        elif metric == "memory":
            row["memory"] = r
        elif metric == "error":
            row["error"] = r.get("error", "failed")
    if not rows:
        return "(no records)"
    base_key = baseline if baseline in rows else next(iter(rows))
    base = rows[base_key]

    def ratio(row: dict[str, Any], metric: str) -> str:
        if metric not in row or metric not in base:
            return "-"
        return f"{row[metric]['cpu_ms_per_op'] / base[metric]['cpu_ms_per_op']:.2f}x"

    k_list = sorted(ks)
    head = [
        "system/variant",
        "start ms",
        "start/s",
        "x base",
        "resume ms",
        "resume/s",
        "x base",
        *[f"k={k} ms" for k in k_list],
        "KiB/paused (RSS)",
        "KiB/paused (traced)",
        "storage B/paused",
        "storage B/loop",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in rows.items():
        s, rs = row.get("start"), row.get("resume")
        cells = [
            key,
            _fmt(s and s["cpu_ms_per_op"], 2),
            _fmt(s and s["ops_per_s"], 0),
            ratio(row, "start"),
            _fmt(rs and rs["cpu_ms_per_op"], 2),
            _fmt(rs and rs["ops_per_s"], 0),
            ratio(row, "resume"),
        ]
        growth = None
        for k in k_list:
            lr = row["loops"].get(k)
            if lr is None:
                cells.append("-")
            elif lr.get("status") == "ok":
                cells.append(_fmt(lr["cpu_ms"], 1))
                growth = lr.get("storage_growth_bytes_per_loop", growth)
            else:
                ext = lr.get("extrapolated_cpu_ms")
                cells.append("skipped" + (f" (~{ext:.0f} extrap.)" if ext is not None else ""))
        mem = row.get("memory")
        cells.append(_fmt(mem and mem["rss_bytes_per_session"] / 1024, 1))
        cells.append(_fmt(mem and mem["tracemalloc_bytes_per_session"] / 1024, 1))
        cells.append(_fmt(mem.get("storage_bytes_per_session") if mem else None, 0))
        cells.append(_fmt(growth, 0))
        if "error" in row:
            cells[0] += " (ERROR)"
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(f"\nbaseline for ratios: {base_key}; ms = CPU ms (time.process_time) per operation")
    return "\n".join(lines)


def _parse_budgets(items: Sequence[str], default: float) -> dict[str, float]:
    budgets = {name: default for name in PEERS}
    for item in items:
        name, _, value = item.partition("=")
        if name not in PEERS or not value:
            raise SystemExit(f"--loop-budget expects SYSTEM=SECONDS with SYSTEM in {list(PEERS)}")
        budgets[name] = float(value)
    return budgets


def shared_args(args: argparse.Namespace) -> list[str]:
    """The options every system's module gets alike (``--sessions``, ``--reps``, ``--loops``,
    ``--warmup``, and ``--loop-reps`` when given), from a namespace holding those fields."""
    shared = [f"--sessions={args.sessions}", f"--reps={args.reps}", f"--loops={args.loops}", f"--warmup={args.warmup}"]
    if args.loop_reps is not None:
        shared.append(f"--loop-reps={args.loop_reps}")
    return shared


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (see ``--help``)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="peers venv (default bench/.peers-venv)")
    p.add_argument("--base-python", help="interpreter to create the venv (default pyenv 3.12.1)")
    p.add_argument("--setup-only", action="store_true", help="create/refresh the venv and exit")
    p.add_argument("--reinstall", action="store_true", help="recreate the venv from scratch")
    p.add_argument(
        "--only",
        action="append",
        default=[],
        help="SYSTEM or SYSTEM/VARIANT to run (repeatable; default all)",
    )
    p.add_argument("--sessions", type=int, default=500)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--loops", default="1,10,100,1000", help="k list (default 1,10,100,1000)")
    p.add_argument("--loop-reps", type=int, default=None, help="sessions per k (default --reps)")
    p.add_argument("--loop-budget-s", type=float, default=120.0, help="per variant (default 120)")
    p.add_argument(
        "--loop-budget",
        action="append",
        default=[],
        metavar="SYSTEM=SECONDS",
        help="per-system override of --loop-budget-s, e.g. adk=300",
    )
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    p.add_argument("--out", type=Path, help="write all JSON lines to this file")
    p.add_argument("--baseline", default=None, help="SYSTEM/VARIANT for table ratios")
    p.add_argument("--quiet", action="store_true", help="do not echo JSON lines on stdout")
    args = p.parse_args(argv)

    py = ensure_venv(args.venv, args.base_python, force=args.reinstall)
    if args.setup_only:
        print(py)
        return 0

    budgets = _parse_budgets(args.loop_budget, args.loop_budget_s)
    common_args = shared_args(args)

    selected = [
        (system, variant)
        for system, (_, variants) in PEERS.items()
        for variant in variants
        if not args.only or system in args.only or f"{system}/{variant}" in args.only
    ]
    records: list[dict[str, Any]] = []
    out = args.out.open("w") if args.out else None
    try:
        for system, variant in selected:
            module = PEERS[system][0]
            runs = [
                [
                    f"--variant={variant}",
                    "--metrics=start_resume,loops",
                    f"--loop-budget-s={budgets[system]}",
                    *common_args,
                ]
            ]
            if not args.no_memory:
                runs.append([f"--variant={variant}", "--metrics=memory", *common_args])
            for run_args in runs:
                for rec in run_module(py, module, run_args):
                    records.append(rec)
                    line = json.dumps(rec)
                    if out is not None:
                        out.write(line + "\n")
                        out.flush()
                    if not args.quiet:
                        print(line, flush=True)
    finally:
        if out is not None:
            out.close()
    _log("\n" + format_table(records, args.baseline))
    return 1 if any(r.get("metric") == "error" for r in records) else 0


if __name__ == "__main__":
    raise SystemExit(main())
