"""Workers killed with ``kill -9`` mid-task on PostgreSQL: mid-attempt at an outbound event, and
mid-notification. The task is left ``RUNNING`` under the dead worker; the surviving worker queues
it again once the dead one's heartbeat is older than the task lease (2 s here) and runs it."""

from __future__ import annotations

import uuid

import pytest

from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for

pytestmark = pytest.mark.scaleout

BACKOFF = 10.0  # the stack's OUTBOUND_BACKOFF (the default)

EMIT = """
from reviewconsole.outbound.models import Subscription
from reviewconsole.outbound.services import event_emit
Subscription.objects.create(name={name!r}, url={url!r}, events=["session.failed"], workflows=["no-such-workflow"])
(message,) = event_emit(event_type="session.failed", workflow="no-such-workflow", data={{"session_id": "s1"}})
print(message.pk)
"""

HOLDER = (
    "SELECT h.pid, t.status FROM django_tasks_database_dbtaskresult t"
    " JOIN console_workerheartbeat h ON h.worker_id = split_part(t.worker_ids ->> -1, '/', 1)"
    " WHERE t.task_path LIKE %s AND t.args_kwargs->'args'->>0 = %s"
)


def _holder(stack, task_name: str, arg: str):
    """The live worker process running ``task_name(arg)``."""
    [row] = stack.sql(HOLDER, f"%.{task_name}", arg)
    assert row["status"] == "RUNNING"
    return stack.worker_with_pid(row["pid"])


@pytest.fixture
def receiver():
    server = Receiver(hold=1).start()
    yield server
    server.stop()


def test_a_worker_killed_mid_attempt_the_survivor_sends_it_again(healthy, receiver):
    stack = healthy
    name = f"crash-{uuid.uuid4().hex[:8]}"
    message_id = stack.manage("shell", "-c", EMIT.format(name=name, url=receiver.url)).split()[-1]
    wait_for(lambda: len(receiver.received) == 1, 30, "the first attempt reaches the receiver")
    stack.kill(_holder(stack, "deliver_message", message_id))

    wait_for(lambda: len(receiver.received) >= 2, BACKOFF, "the event again, within the back-off")
    assert receiver.webhook_ids() == [message_id, message_id]
    wait_for(
        lambda: stack.sql("SELECT 1 FROM outbound_outboundmessage WHERE id = %s AND status = 'delivered'", message_id),
        10,
        "the message delivered",
    )
    attempts = stack.sql(
        "SELECT number, status_code FROM outbound_attempt WHERE message_id = %s ORDER BY number", message_id
    )
    assert [(a["number"], a["status_code"]) for a in attempts] == [(1, None), (2, 200)]
    assert len(receiver.received) == 2


def test_a_worker_killed_mid_notification_the_survivor_mails_the_rest_once(healthy, stack_smtp):
    stack = healthy
    marker = f"crash-{uuid.uuid4().hex[:8]}"
    stack_smtp.hold_if = lambda recipients, content: "reviewer@example.com" in recipients and marker in content
    with stack.client() as client:
        response = stack.send_webhook(client, "email-review", {"complaint": f"Battery drains {marker}"})
    assert response.status_code == 202, response.text
    wait_for(lambda: stack_smtp.held, 30, "the mail to reviewer held mid-send")
    assert stack_smtp.count_to("manager@example.com", marker) == 1
    [item] = stack.sql("SELECT id FROM inbox_item WHERE session_id = %s", response.json()["session_id"])
    stack.kill(_holder(stack, "notify_new_item", str(item["id"])))

    wait_for(lambda: stack_smtp.count_to("reviewer@example.com", marker) == 1, 15, "reviewer mailed by the survivor")
    assert stack_smtp.count_to("manager@example.com", marker) == 1  # recorded before the crash: not sent again
    recorded = "SELECT count(*) AS n FROM inbox_notificationsent WHERE item_id = %s"
    wait_for(lambda: stack.sql(recorded, item["id"])[0]["n"] == 2, 10, "both sends recorded")
