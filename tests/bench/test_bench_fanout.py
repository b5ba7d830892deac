"""``bench/bench_fanout.py`` (issue 18, target 5) at a tiny size: every socket receives every new
item and the table is printed (no timing asserted). With ``DATABASE_URL`` (PostgreSQL) and
``REDIS_URL`` also across 2 Daphne processes on ``channels_redis`` (marker ``scaleout``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


def _fanout(tmp_path: Path, setup: str) -> list[dict]:
    figures = tmp_path / "fanout.json"
    result = subprocess.run(
        [sys.executable, "bench/bench_fanout.py", "--sockets=6", "--items=2", f"--setup={setup}", f"--json={figures}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    print(result.stdout)  # the table, for whoever runs with -s
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert "6 sockets on one queue" in result.stdout
    assert "webhook → socket" in result.stdout and "first socket → socket" in result.stdout
    return list(json.loads(figures.read_text()))


def test_fanout_on_the_embedded_default(tmp_path):
    [figures] = _fanout(tmp_path, "embedded")
    assert (figures["sockets"], figures["items"]) == (6, 2)
    assert figures["webhook → socket"]["max"] >= figures["webhook → socket"]["p50"] > 0


@pytest.mark.scaleout
def test_fanout_across_two_web_processes_on_redis(tmp_path):
    if not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")):
        pytest.skip("needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    [figures] = _fanout(tmp_path, "redis")
    assert figures["setup"].startswith("scale-out")
