"""A probe consumer of the sessions' outbox for the ``kill -9`` test of the relay
(``tests/workflow_sessions/test_outbox_crash.py``); never in a real deployment.

Registered by ``probes.py`` (on the workflow list only with ``REVIEWCONSOLE_TEST_WORKFLOWS=1``)
when ``$REVIEWCONSOLE_PROBE_OUTBOX_HOLD`` names a ``host:port``. For every ``interrupt.opened``
of a probe session it connects there, sends ``<outbox id>\\n`` and waits until the test closes the
connection (at most :data:`HOLD_SECONDS`): the relay is held mid-row, inside the row's transaction,
after the inbox's and outbound's consumers wrote their rows. A refused connection does not hold.
"""

from __future__ import annotations

import os
import socket

from reviewconsole.workflow_sessions.domain_events import DomainEvent, InterruptOpened
from reviewconsole.workflow_sessions.outbox import register_consumer

__all__ = ["HOLD_SECONDS", "register"]

HOLD_SECONDS = 120.0


def _hold(event: DomainEvent, outbox_id: int) -> None:
    address = os.environ.get("REVIEWCONSOLE_PROBE_OUTBOX_HOLD", "")
    if not address or not isinstance(event, InterruptOpened) or event.workflow != "probe":
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=HOLD_SECONDS) as conn:
            conn.sendall(f"{outbox_id}\n".encode())
            conn.recv(1)  # returns when the test closes the connection
    except OSError:
        return


def register() -> None:
    """Register the probe consumer (last: order 1000) when the environment asks for it."""
    if os.environ.get("REVIEWCONSOLE_PROBE_OUTBOX_HOLD"):
        register_consumer("probe-hold", _hold, order=1000)
