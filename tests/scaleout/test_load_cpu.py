"""``bench/load_cpu.py`` at CI size: a stack with Daphne and uvicorn fronts, every step of both
servers completes all its sessions with reviewers told only by their sockets, no errors (nor a
decision stored other than revise then approve), and the tables print. No timing is asserted.

Run with ``-s`` to see the tables; the full-size run is described in the script's docstring.
"""

from __future__ import annotations

import pytest

from bench import load_cpu as load
from tests.scaleout.stack import Stack

pytestmark = pytest.mark.scaleout


@pytest.fixture
def two_fronts(stack_servers, stack_smtp, tmp_path):
    """A stack of its own (1 Daphne and 1 uvicorn process, each behind its nginx; 1 worker; mail to
    :func:`stack_smtp`)."""
    running = Stack(
        tmp_path / "stack",
        web=1,
        workers=1,
        threads=2,
        lease_ttl=30,
        extra_env=load.mail_env(stack_smtp.port),
        web_servers=("daphne", "uvicorn"),
    )
    running.start()
    yield running
    running.stop()


def test_cpu_per_session_at_ci_size(two_fronts):
    config = load.Config(rates=(2.0,), seconds=2.0, sessions=4, drain=60.0, reviewers=2, senders=2, idle=0.0)
    figures = load.run(two_fronts, config)
    print(load.report(figures))
    assert set(figures["servers"]) == {"daphne", "uvicorn"}
    for server, data in figures["servers"].items():
        assert [s["step"] for s in data["steps"]] == ["capacity", "2/s", "half"], server
        for step in data["steps"]:
            where = f"{server} {step['step']}"
            assert step["errors"] == [], where
            assert step["completed"] == step["accepted"] == step["sessions"], where
            for key in ("webhook_to_socket_ms", "revise_to_next_ms", "approve_to_completion_ms"):
                assert step[key]["n"] == step["sessions"], (where, key)
            assert step["cpu_s"]["total"] > 0, where
            assert all(step["cpu_s"][kind] >= 0 for kind in ("web", "worker", "nginx", "postgres", "redis")), where
