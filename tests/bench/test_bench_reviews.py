"""``bench/bench_reviews.py`` (issue 14) at a tiny size: it runs and prints its table (no timing asserted).

The real console (``manage.py serve``), the real ``reviewconsole_client.Client`` asking and
waiting, the demo reviewer's websocket and decision form. Full size: ``bench/README.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


def test_bench_reviews_runs_at_a_tiny_size_and_prints_its_table(tmp_path):
    records = tmp_path / "reviews.json"
    result = subprocess.run(
        [sys.executable, "bench/bench_reviews.py", "--reviews=3", "--warmup=1", f"--json={records}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    print(result.stdout)  # the table, for whoever runs with -s
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert "| latency (ms) | n | p50 | p95 | p99 | max |" in result.stdout
    assert "| ask → interrupt.created on the reviewer's websocket | 3 |" in result.stdout
    assert "| decision → wait returns the decision | 3 |" in result.stdout
    figures = json.loads(records.read_text())
    assert [r["decided_by"] for r in figures["records"]] == ["reviewer"] * 3
