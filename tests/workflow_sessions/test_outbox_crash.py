"""``kill -9`` of the embedded console (``manage.py serve``) while its outbox relay is mid-row.

A probe session pauses on a review; the relay, inline after that commit, runs the inbox's and
outbound's consumers (the item, its queue change, an ``interrupt.created`` message) and then the
probe consumer (``reviewconsole/demo/outbox_probe.py``), which the test holds on a socket. The
console is killed there: the row's transaction never commits. A new console's recovery sweep
relays the row again: the item, its queue change and its outbound message exist exactly once,
and nothing is lost.
"""

from __future__ import annotations

import socket
import threading

import pytest

from tests.console.embedded import EmbeddedConsole
from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for

START = """
from reviewconsole.outbound.models import Subscription
from reviewconsole.workflow_sessions.services import session_start
Subscription.objects.create(name="crm", url={url!r}, events=["interrupt.created"])
print(session_start(workflow="probe", data={{"label": "crash", "ask": True}}, user_id="test").pk)
"""


class Holder:
    """A socket server that keeps the first connection open (until :meth:`stop`) and closes later ones at once."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        self.first = threading.Event()
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        host, port = self.server.getsockname()[:2]
        return f"{host}:{port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.lines.append(conn.recv(64).decode().strip())
            if not self.held:
                self.held.append(conn)
                self.first.set()
            else:
                conn.close()

    def stop(self) -> None:
        for conn in self.held:
            conn.close()
        self.server.close()


@pytest.fixture
def holder():
    running = Holder()
    yield running
    running.stop()


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def console(tmp_path, holder):
    running = EmbeddedConsole(
        tmp_path,
        env={
            "REVIEWCONSOLE_TEST_WORKFLOWS": "1",
            "REVIEWCONSOLE_PROBE_OUTBOX_HOLD": holder.address,
            "REVIEWCONSOLE_LEASE_TTL": "2",  # the recovery loop (and its outbox sweep) every second
        },
    )
    yield running
    running.stop()


def test_a_relay_killed_mid_row_publishes_it_again_exactly_once(console, holder, receiver):
    console.start()
    session_id = console.shell(START.format(url=receiver.url)).split()[-1]
    assert holder.first.wait(60), "the relay reaches the probe consumer"
    [outbox_id] = holder.lines
    [row] = console.sql("SELECT id, kind, published_at FROM workflow_sessions_outboxevent WHERE id = ?", outbox_id)
    assert (row["kind"], row["published_at"]) == ("interrupt.opened", None)  # the claim is not committed
    assert console.sql("SELECT id FROM inbox_item WHERE session_id = ?", session_id) == []
    console.kill()

    console.start(migrate=False)
    items = wait_for(lambda: console.sql("SELECT id FROM inbox_item WHERE session_id = ?", session_id), 60, "the item")
    wait_for(
        lambda: console.sql(
            "SELECT id FROM workflow_sessions_outboxevent WHERE id = ? AND published_at IS NOT NULL", outbox_id
        ),
        60,
        "the row published",
    )
    assert len(items) == 1
    [item] = items
    changes = console.sql("SELECT event FROM inbox_queuechange WHERE item_id = ?", item["id"])
    assert [c["event"] for c in changes] == ["interrupt.created"]
    messages = console.sql("SELECT event_type, outbox_id FROM outbound_outboundmessage")
    assert messages == [{"event_type": "interrupt.created", "outbox_id": int(outbox_id)}]
    asked = console.sql("SELECT status FROM workflow_sessions_interrupt WHERE session_id = ?", session_id)
    assert asked == [{"status": "pending"}]
    unpublished = console.sql("SELECT id FROM workflow_sessions_outboxevent WHERE published_at IS NULL")
    assert unpublished == []
    assert holder.lines == [outbox_id, outbox_id]  # the probe saw the row twice: once cut off, once done
