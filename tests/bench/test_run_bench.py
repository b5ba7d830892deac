"""The benchmark suite of issue 8 at a tiny size: it runs and prints its tables (no timing asserted).

``bench/run_bench.py`` runs our engine (both stores) and, when their virtualenv is ready
(``.ci/run`` creates it with ``python bench/peers/run_peers.py --setup-only``), the peers;
``bench/bench_console.py`` drives the real console (``manage.py serve``) through webhooks, a
websocket and decisions, then times the inbox page. Full size: ``bench/README.md``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import run_bench  # noqa: E402


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
    print(result.stdout)  # the tables, for whoever runs with -s
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result


def test_run_bench_runs_at_a_tiny_size_and_prints_its_table():
    peers = run_bench.peers_venv_ready()
    result = _run(
        [
            "bench/run_bench.py",
            "--sessions=10",
            "--reps=1",
            "--loops=1,10",
            "--loop-reps=1",
            "--warmup=2",
            "--memory-runs=1",
            "--breakdown-loops=10",
            f"--peers={'yes' if peers else 'no'}",
            "--no-console",
        ],
        timeout=300,
    )
    out = result.stdout
    assert "| system/variant | start CPU ms |" in out
    assert "| reviewconsole/memory |" in out
    assert "| reviewconsole/orm |" in out
    assert "## Targets (issue 8)" in out
    for command in ("bench/load_cpu.py", "bench/bench_fanout.py", "bench/bench_inbox_postgres.py"):
        assert f"not in this run: {command}" in out, command  # issue 18's targets measured elsewhere
    assert "ERROR" not in out
    if peers:
        for row in ("langgraph/memory", "langgraph/sqlite", "adk/memory", "adk/sqlite", "maf/live", "maf/file"):
            assert f"| {row} |" in out, row
    else:
        print("the peers' venv is not ready: run python bench/peers/run_peers.py --setup-only")


def test_bench_console_runs_at_a_tiny_size_and_prints_its_table():
    out = _run(
        ["bench/bench_console.py", "--sessions=5", "--warmup=1", "--inbox-items=1000", "--inbox-repeat=2"],
        timeout=180,
    ).stdout
    assert "| webhook → interrupt.created on the reviewer's websocket | 5 |" in out
    assert "| decision (revise) → next interrupt.created | 5 |" in out
    assert "| decision (approve / reject) → session completed | 5 |" in out
    assert "| inbox page, every queue |" in out
