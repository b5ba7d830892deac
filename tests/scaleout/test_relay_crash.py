"""``kill -9`` of a worker while its outbox relay is mid-row, on the scale-out stack (issue 13).

The workers are restarted with ``$REVIEWCONSOLE_PROBE_OUTBOX_HOLD`` naming a socket the test
holds (the probe consumer of ``reviewconsole/demo/outbox_probe.py`` and the ``Holder`` of
``tests/workflow_sessions/test_outbox_crash.py``). A probe session pauses on a review; the
worker that committed it relays the ``interrupt.opened`` row inline, runs the inbox's and
outbound's consumers and stops in the probe's, inside the row's uncommitted transaction. That
worker is killed there. The surviving worker's recovery sweep (every second: lease TTL 2 s)
relays the row again, before the killed worker is started again: the item, its queue change and
its outbound message exist once, a receiver deduping on ``webhook-id`` hears of it once, and the
session completes when a reviewer approves.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.outbound.receiver import Receiver
from tests.scaleout.clients import Reviewer
from tests.scaleout.stack_parts import Proc, wait_for
from tests.workflow_sessions.test_outbox_crash import Holder

pytestmark = pytest.mark.scaleout

DEADLINE = 120.0  # seconds for any one state to be reached: a shared, loaded machine

SUBSCRIBE = """
from reviewconsole.outbound.models import Subscription
Subscription.objects.create(name={name!r}, url={url!r}, events=["interrupt.created"], workflows=["probe"])
"""


def _socket_owner(procs: list[Proc], port: int) -> Proc:
    """The live process among ``procs`` owning the TCP socket bound to loopback ``port`` (Linux /proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(f"socket:[{fields[9]}]")
    for proc in procs:
        if not proc.alive():
            continue
        fds = Path(f"/proc/{proc.pid}/fd")
        for fd in fds.iterdir():
            try:
                if str(fd.readlink()) in inodes:
                    return proc
            except OSError:
                continue
    raise AssertionError(f"no stack process owns the connection from port {port}")


def _restart_workers(stack) -> None:
    for proc in stack.workers:
        if proc.alive():
            stack.kill(proc)
        stack.launch(proc)
    for proc in stack.workers:
        stack.wait_ready(proc)


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
def held_stack(healthy, holder, receiver):
    """The stack with a subscription to the probe's new items and workers whose probe consumer
    holds its first ``interrupt.opened`` on :func:`holder`; afterwards as it was."""
    stack = healthy
    name = f"relay-crash-{uuid.uuid4().hex[:8]}"
    stack.manage("shell", "-c", SUBSCRIBE.format(name=name, url=receiver.url))
    stack.env["REVIEWCONSOLE_PROBE_OUTBOX_HOLD"] = holder.address
    try:
        _restart_workers(stack)
        yield stack
    finally:
        stack.sql("UPDATE outbound_subscription SET enabled = false WHERE name = %s", name)
        stack.env.pop("REVIEWCONSOLE_PROBE_OUTBOX_HOLD", None)
        _restart_workers(stack)


def test_a_worker_killed_mid_relay_the_survivor_publishes_the_row_once(held_stack, holder, receiver):
    stack = held_stack
    sid = stack.start_probe(label="relay-crash")
    assert holder.first.wait(DEADLINE), "the relay reaches the probe consumer"
    [line] = holder.lines
    outbox_id = int(line)
    [row] = stack.sql(
        "SELECT kind, session_id, published_at FROM workflow_sessions_outboxevent WHERE id = %s", outbox_id
    )
    assert (row["kind"], row["session_id"], row["published_at"]) == ("interrupt.opened", sid, None)
    assert stack.sql("SELECT id FROM inbox_item WHERE session_id = %s", sid) == []  # not committed
    victim = _socket_owner(stack.workers, holder.held[0].getpeername()[1])
    stack.kill(victim)

    published = "SELECT 1 FROM workflow_sessions_outboxevent WHERE id = %s AND published_at IS NOT NULL"
    wait_for(lambda: stack.sql(published, outbox_id), DEADLINE, "the row published by the survivor")
    assert not victim.alive()  # the survivor's sweep did it: the victim is not back yet
    assert holder.lines == [line, line]  # the probe saw the row twice: cut off, then done
    stack.launch(victim)

    [item] = stack.sql("SELECT id, status FROM inbox_item WHERE session_id = %s", sid)
    assert item["status"] == "pending"
    changes = stack.sql("SELECT event FROM inbox_queuechange WHERE item_id = %s", item["id"])
    assert [c["event"] for c in changes] == ["interrupt.created"]
    [message] = stack.sql("SELECT id, event_type FROM outbound_outboundmessage WHERE outbox_id = %s", outbox_id)
    assert message["event_type"] == "interrupt.created"

    def heard() -> list[str]:
        return [r.headers["webhook-id"] for r in receiver.received if r.json["data"]["session_id"] == sid]

    wait_for(heard, DEADLINE, "the receiver hears of the item")
    delivered = "SELECT 1 FROM outbound_outboundmessage WHERE id = %s AND status = 'delivered'"
    wait_for(lambda: stack.sql(delivered, message["id"]), DEADLINE, "the message delivered")
    assert sorted(set(heard())) == [str(message["id"])]  # deduped on webhook-id: once
    assert [r.json["type"] for r in receiver.received] == ["interrupt.created"] * len(receiver.received)

    stack.wait_ready(victim)
    reviewer = Reviewer(stack, "manager").login()
    listed = wait_for(lambda: [i for i in reviewer.items() if i["session_id"] == sid], DEADLINE, "item listed")
    assert [i["id"] for i in listed] == [item["id"]]
    assert reviewer.decide(item["id"], "approve").status_code == 302
    stack.wait_status(sid, "completed", timeout=DEADLINE)
    assert stack.execution_counts(sid) == {"intake": 1, "work": 1, "review": 1, "finish": 1}
    stack.assert_events_whole(sid)
    unpublished = "SELECT id FROM workflow_sessions_outboxevent WHERE session_id = %s AND published_at IS NULL"
    wait_for(lambda: stack.sql(unpublished, sid) == [], DEADLINE, "every row of the session published")
    assert (
        stack.sql("SELECT id FROM workflow_sessions_outboxevent WHERE session_id = %s AND failed_at IS NOT NULL", sid)
        == []
    )
