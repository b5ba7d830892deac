"""``bench/bench_dashboard.py``'s command line: ``--help`` explains it and runs nothing, bad
arguments are refused before the minutes of filling start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    # A timeout well under the benchmark's run time: the command line must answer without running it.
    return subprocess.run(
        [sys.executable, "bench/bench_dashboard.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_help_explains_and_runs_nothing():
    result = _bench("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: bench_dashboard.py")
    assert "--pending" in result.stdout and "--decided" in result.stdout and "--repeat" in result.stdout
    assert "inserted" not in result.stdout


def test_bad_arguments_are_refused_before_anything_runs():
    for args in (["--pending", "many"], ["--repeat", "0"], ["--decided", "-1"], ["--nope"]):
        result = _bench(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "usage: bench_dashboard.py" in result.stderr
        assert "inserted" not in result.stdout
