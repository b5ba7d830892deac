"""``bench/bench_inbox_postgres.py`` (issue 18, target 6) at a tiny size on PostgreSQL: it seeds,
times every page, prints the plans (the search by the trigram index) and drops its database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

pytestmark = [pytest.mark.bench, pytest.mark.scaleout]

ROOT = Path(__file__).resolve().parents[2]


def test_bench_inbox_postgres_runs_at_a_tiny_size():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs DATABASE_URL (PostgreSQL, a role that may create databases)")
    name = f"rc_bench_inbox_{os.getpid()}"
    result = subprocess.run(
        [sys.executable, "bench/bench_inbox_postgres.py", "3000", "--decided=300", "--repeat=1", f"--database={name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    print(result.stdout)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert "3,000 pending + 300 decided items inserted" in result.stdout
    for page in ("first page", "queue + decided by policy", "search: one item", "search: every item"):
        assert f"  {page} " in result.stdout
    assert "  target every page < 100 ms wall at 3,000 items: " in result.stdout
    assert "EXPLAIN (ANALYZE, BUFFERS)" in result.stdout and "Execution Time" in result.stdout
    # The role's own database need not exist (CI's does not): ask the maintenance one, as the bench does.
    with psycopg.connect(urlunsplit(urlsplit(url)._replace(path="/postgres"))) as conn:
        assert conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None
