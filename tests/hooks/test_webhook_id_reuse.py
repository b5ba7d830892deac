"""A ``409 session_waiting`` refusal is not stored, so the sender's retry with the same
``webhook-id`` once the waiting session has ended is judged again.

Found by the tester (tests/attack/test_webhook_id_reuse.py in the attack worktree).
"""

from __future__ import annotations

import uuid

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import post_webhook

pytestmark = pytest.mark.django_db


def _id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def _wait_on_vip(client, on_commit):
    WebhookEndpoint.objects.filter(slug="vip-discount").update(thread_key="/customer_id")
    with on_commit():
        first = post_webhook(client, {"customer_id": "c123"}, slug="vip-discount")
    assert first.status_code == 202
    return first.json()["session_id"]


def test_a_session_waiting_refusal_is_audited_not_stored(client, demo, on_commit):
    waiting = _wait_on_vip(client, on_commit)
    webhook_id = _id()
    with on_commit():
        refused = post_webhook(client, {"customer_id": "c123"}, slug="vip-discount", webhook_id=webhook_id)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "session_waiting"
    assert refused.json()["error"]["session_id"] == waiting
    assert not WebhookDelivery.objects.filter(webhook_id=webhook_id).exists()
    entry = AuditEntry.objects.filter(action="webhook.delivery", detail__webhook_id=webhook_id).get()
    assert (entry.after["status"], entry.after["outcome"]) == (409, "rejected")


def test_a_session_waiting_refusal_is_not_replayed_to_the_retry_after_the_session_ended(
    client, demo, manager, on_commit
):
    waiting = _wait_on_vip(client, on_commit)
    webhook_id = _id()
    with on_commit():
        refused = post_webhook(client, {"customer_id": "c123"}, slug="vip-discount", webhook_id=webhook_id)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "session_waiting"

    item = Item.objects.get(session_id=waiting, status="pending")
    with on_commit():
        interrupt_decide(
            interrupt=item,
            user=manager,
            action="approve",
            interrupt_id=item.interrupt_id,
            args_digest=(item.session_interrupt.metadata or {}).get("args_digest") or "",
        )
    assert WorkflowSession.objects.get(pk=waiting).status == "completed"

    # The sender retries its refused delivery (same webhook-id, same body): the session it waited
    # for has ended, so it is accepted now, not answered with the stale 409.
    with on_commit():
        retry = post_webhook(client, {"customer_id": "c123"}, slug="vip-discount", webhook_id=webhook_id)
    assert retry.status_code == 202, retry.json()
    assert retry.json()["session_id"] != waiting
    assert WebhookDelivery.objects.filter(webhook_id=webhook_id, outcome="accepted").exists()
