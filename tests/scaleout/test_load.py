"""``bench/load_scaleout.py`` at CI size against the session's stack: everything completes, no errors.

The figures are printed (run with ``-s`` to see them); the full-size run is described in the
script's docstring.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.scaleout

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "load_scaleout.py"


def load_script():
    spec = importlib.util.spec_from_file_location("load_scaleout", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_load_script_at_ci_size(healthy):
    load = load_script()
    config = load.Config(sessions=24, reviewers=4, sockets=2, senders=2, readers=1, revisions=1, seconds=90)
    figures = load.run(healthy, config)
    print("\n" + load.report(figures))
    assert figures["sessions_completed"] == config.sessions
    assert figures["errors"] == []
    for key in ("webhook_to_visible_ms", "decision_to_next_interrupt_ms", "decision_to_completion_ms"):
        assert figures[key]["n"] >= config.sessions, key
    assert figures["inbox_page_ms"]["n"] > 0
