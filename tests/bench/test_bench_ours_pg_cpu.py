"""``bench/ours_pg_cpu.py`` (issue 18, targets 2 and 4) at a tiny size on PostgreSQL: it runs our
durable path and prints the client's and the server's CPU per start and per resume."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bench, pytest.mark.scaleout]

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^start [\d.]+ \(server [\d.]+\) resume [\d.]+ \(server [\d.]+\) ms$")


def test_ours_pg_cpu_runs_at_a_tiny_size():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs DATABASE_URL (PostgreSQL on this machine, a role that may create databases)")
    result = subprocess.run(
        [sys.executable, "bench/ours_pg_cpu.py", "--sessions", "3", "--reps", "1"],
        cwd=ROOT,
        env={**os.environ, "BENCH_DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert LINE.match(result.stdout.strip()), result.stdout
