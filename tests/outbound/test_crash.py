"""``kill -9`` of the embedded console (``manage.py serve``) while it delivers an outbound event.

The receiver holds the first POST unanswered; the console is killed during it, which leaves the
``deliver_message`` task ``RUNNING`` under a dead worker. A new console queues it again once the
dead worker's heartbeat is older than the task lease (1 s here) and sends the event again, with the
same ``webhook-id``, well within the back-off (30 s here); the log shows one 2xx and the attempt
that was cut off.
"""

from __future__ import annotations

import pytest

from tests.console.embedded import EmbeddedConsole
from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for

BACKOFF = 30.0

EMIT = """
from reviewconsole.outbound.models import Subscription
from reviewconsole.outbound.services import event_emit
Subscription.objects.create(name="crm", url={url!r}, events=["session.completed"])
(message,) = event_emit(event_type="session.completed", workflow="email-review", data={{"session_id": "s1"}})
print(message.pk)
"""


@pytest.fixture
def receiver():
    server = Receiver(hold=1).start()
    yield server
    server.stop()


@pytest.fixture
def console(tmp_path):
    running = EmbeddedConsole(
        tmp_path, env={"REVIEWCONSOLE_OUTBOUND_BACKOFF": str(BACKOFF), "REVIEWCONSOLE_OUTBOUND_TIMEOUT": "120"}
    )
    yield running
    running.stop()


def test_an_attempt_cut_off_by_kill_9_is_sent_again_with_the_same_webhook_id(console, receiver):
    console.start()
    message_id = console.shell(EMIT.format(url=receiver.url)).split()[-1]
    wait_for(lambda: len(receiver.received) == 1, 30, "the first attempt reaches the receiver")
    console.kill()  # mid-attempt: the receiver has not answered
    [task] = console.tasks("deliver_message")
    assert task["status"] == "RUNNING"  # what a dead worker leaves behind
    [message] = console.sql("SELECT status, attempts FROM outbound_outboundmessage WHERE id = ?", message_id)
    assert (message["status"], message["attempts"]) == ("pending", 1)

    console.start(migrate=False)
    wait_for(lambda: len(receiver.received) >= 2, BACKOFF, "the event again, within the back-off")
    assert receiver.webhook_ids() == [message_id, message_id]
    assert receiver.received[0].body == receiver.received[1].body
    delivered = wait_for(
        lambda: console.sql("SELECT * FROM outbound_outboundmessage WHERE id = ? AND status = 'delivered'", message_id),
        10,
        "the message delivered",
    )
    assert delivered[0]["attempts"] == 2
    attempts = console.sql(
        "SELECT number, status_code, error FROM outbound_attempt a"
        " JOIN outbound_outboundmessage m ON a.message_id = m.id WHERE m.id = ? ORDER BY number",
        message_id,
    )
    assert [(a["number"], a["status_code"]) for a in attempts] == [(1, None), (2, 200)]
    assert attempts[0]["error"].startswith("interrupted")
    assert [t["status"] for t in console.tasks("deliver_message")] == ["SUCCESSFUL"]
    assert len(receiver.received) == 2  # delivered: nothing more is sent
