"""``bench/bench_inbox.py``'s command line: ``--help`` explains it and runs nothing, bad arguments
are refused before the 40-second benchmark starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench_inbox(*args: str) -> subprocess.CompletedProcess[str]:
    # A timeout well under the benchmark's run time: the command line must answer without running it.
    return subprocess.run(
        [sys.executable, "bench/bench_inbox.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_help_explains_and_runs_nothing():
    result = _bench_inbox("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: bench_inbox.py")
    assert "--repeat" in result.stdout and "count" in result.stdout
    assert "inserted" not in result.stdout


def test_bad_arguments_are_refused_before_anything_runs():
    for args in (["many"], ["--repeat", "0"], ["--nope"]):
        result = _bench_inbox(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "usage: bench_inbox.py" in result.stderr
        assert "inserted" not in result.stdout


def test_count_and_repeat_are_read():
    sys.path.insert(0, str(ROOT))
    try:
        from bench import bench_inbox
    finally:
        sys.path.remove(str(ROOT))
    args = bench_inbox.parse_args(["2000", "--repeat", "3"])
    assert (args.count, args.repeat) == (2000, 3)
    args = bench_inbox.parse_args([])
    assert (args.count, args.repeat) == (100_000, 10)
