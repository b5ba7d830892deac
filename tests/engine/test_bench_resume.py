"""``bench/bench_resume.py`` at small size: the work of a resume does not depend on history."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_resume.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_resume", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.bench
async def test_a_resume_does_the_same_work_after_2_or_40_loops():
    bench = load_bench()
    short = await bench.measure(2, 3, profile=False)
    long = await bench.measure(40, 3, profile=False)
    assert short["calls_per_resume"] == long["calls_per_resume"]  # Python calls, counted: no timing noise
    assert long["events"] == 20 * short["events"]
    assert long["checkpoint_bytes"] - short["checkpoint_bytes"] <= 8
