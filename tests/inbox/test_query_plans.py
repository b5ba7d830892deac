"""The inbox's queries walk indexes: SQLite's ``EXPLAIN QUERY PLAN`` for every query of the list
pages (``bench/bench_inbox.py``), printed in every run, with no table scan and no sort."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_inbox.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_inbox", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def filled(demo):
    bench = load_bench()
    bench.fill(3000)
    return bench


def test_every_list_query_uses_an_index_and_no_sort(filled, capsys):
    found = filled.plans()
    assert {name for name, _, _ in found} >= {
        "the first page (overdue first)",
        "a later page (waiting items, after a cursor)",
    }
    with capsys.disabled():
        print("\nEXPLAIN QUERY PLAN, inbox pages over 3,000 pending items:")
        for name, _, plan in found:
            print(f"  [{name}] " + " | ".join(plan))
    for name, sql, plan in found:
        # The foreign keys' indexes keep the names they had before the model was renamed to Item.
        mine = [line for line in plan if "inbox_item" in line or "inbox_interrupt_" in line]
        assert mine, (name, plan)
        for line in mine:
            assert "USING INDEX" in line or "USING COVERING INDEX" in line, (name, line, sql)
        assert not any("TEMP B-TREE" in line for line in plan), (name, plan)


@pytest.mark.bench
def test_the_bench_at_small_size(filled, capsys):
    figures = filled.measure(repeat=3)
    with capsys.disabled():
        print("\ninbox at 3,000 pending items, median server time:")
        for name, ms in figures.items():
            print(f"  {name:<28} {ms:7.1f} ms")
    # A bench prints its figures; no timing is asserted (they move with the machine's load).
    assert "inbox page, every queue" in figures
    assert all(ms > 0 for ms in figures.values()), figures
