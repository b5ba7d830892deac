"""``kill -9`` of the embedded console (``manage.py serve``) while it mails a new item's reviewers.

The SMTP server accepts the mail to the first member of the support queue (``manager``) and holds
the one to the second (``reviewer``) unanswered; the console is killed during it, which leaves
the ``notify_new_item`` task ``RUNNING`` under a dead worker. A new console queues it again once
the dead worker's heartbeat is older than the task lease (1 s here): it mails ``reviewer`` (whose
send was cut off: at least once) and not ``manager`` again (whose send was recorded).
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.console.embedded import EmbeddedConsole
from tests.inbox.smtp_receiver import SmtpReceiver
from tests.scaleout.stack_parts import SECRET, sign, wait_for


def _send_webhook(console: EmbeddedConsole) -> str:
    """Start an email review through the demo's signed webhook; the new session's id."""
    body = json.dumps({"complaint": "My phone battery drains too fast"})
    headers = {"content-type": "application/json", **sign(body, f"msg_{uuid.uuid4().hex}")}
    response = httpx.post(f"{console.url}/hooks/email-review/", content=body, headers=headers, timeout=30)
    assert response.status_code == 202, response.text
    return response.json()["session_id"]


@pytest.fixture
def smtp():
    server = SmtpReceiver(hold_if=lambda recipients, _: "reviewer@example.com" in recipients).start()
    yield server
    server.stop()


@pytest.fixture
def console(tmp_path, smtp):
    running = EmbeddedConsole(
        tmp_path,
        env={
            "REVIEWCONSOLE_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "REVIEWCONSOLE_EMAIL_HOST": "127.0.0.1",
            "REVIEWCONSOLE_EMAIL_PORT": str(smtp.port),
            "DEMO_PASSWORD": "crash-test-pass-0123",
            "DEMO_WEBHOOK_SECRET": SECRET,
        },
    )
    yield running
    running.stop()


def test_a_notification_cut_off_by_kill_9_reaches_the_rest_and_no_one_twice(console, smtp):
    console.manage("migrate", "--noinput")
    console.manage("demo")
    console.start(migrate=False)
    session_id = _send_webhook(console)
    wait_for(lambda: smtp.held, 60, "the mail to reviewer held mid-send")
    assert smtp.count_to("manager@example.com") == 1
    console.kill()
    [task] = console.tasks("notify_new_item")
    assert task["status"] == "RUNNING"  # what a dead worker leaves behind
    [item] = console.sql("SELECT id FROM inbox_item WHERE session_id = ?", session_id)

    console.start(migrate=False)
    wait_for(lambda: smtp.count_to("reviewer@example.com") == 1, 30, "reviewer mailed after the restart")
    wait_for(lambda: [t["status"] for t in console.tasks("notify_new_item")] == ["SUCCESSFUL"], 10, "task done")
    assert smtp.count_to("manager@example.com") == 1  # recorded before the crash: not sent again
    assert len(smtp.received) == 2
    sent = console.sql(
        "SELECT u.username FROM inbox_notificationsent n JOIN auth_user u ON n.user_id = u.id"
        " WHERE n.item_id = ? ORDER BY u.username",
        item["id"],
    )
    assert [row["username"] for row in sent] == ["manager", "reviewer"]
    assert f"/inbox/items/{item['id']}/" in smtp.received[1][1]
