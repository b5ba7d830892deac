"""``bench/load_scaleout.py`` at CI size against the session's stack: everything completes, no errors.

The figures are printed (run with ``-s`` to see them); the full-size run is described in the
script's docstring.
"""

from __future__ import annotations

import pytest

from bench import load_scaleout as load

pytestmark = pytest.mark.scaleout


def test_the_load_script_at_ci_size(healthy):
    config = load.Config(sessions=24, reviewers=4, sockets=2, senders=2, readers=1, revisions=1, seconds=90)
    figures = load.run(healthy, config)
    print("\n" + load.report(figures))
    assert figures["sessions_completed"] == config.sessions
    assert figures["errors"] == []
    for key in ("webhook_to_visible_ms", "decision_to_next_interrupt_ms", "decision_to_completion_ms"):
        assert figures[key]["n"] >= config.sessions, key
    assert figures["inbox_page_ms"]["n"] > 0
