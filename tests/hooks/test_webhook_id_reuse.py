"""A ``webhook-id`` used again: the same body is a copy (its first answer), another body is refused
(422 ``webhook_id_reused``), never answered 202 and dropped; a ``409 session_waiting`` refusal is
not stored, so the sender's retry once the waiting session has ended is judged again.

Found by the tester (tests/attack/test_webhook_id_reuse.py in the attack worktree).
"""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks import services
from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import post_webhook

pytestmark = pytest.mark.django_db


def _id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def test_the_same_id_with_another_body_is_refused_and_the_first_delivery_is_kept(client, demo, on_commit):
    webhook_id = _id()
    with on_commit():
        first = post_webhook(client, {"complaint": "first complaint"}, webhook_id=webhook_id)
    assert first.status_code == 202
    with on_commit():
        other = post_webhook(client, {"complaint": "a different complaint"}, webhook_id=webhook_id)
    assert other.status_code == 422, other.json()
    error = other.json()["error"]
    assert error["code"] == "webhook_id_reused"
    assert "different body" in error["message"] and "new webhook-id" in error["message"]
    assert WorkflowSession.objects.count() == 1
    delivery = WebhookDelivery.objects.get(webhook_id=webhook_id)
    assert (delivery.outcome, delivery.session_id, delivery.duplicates) == ("accepted", first.json()["session_id"], 0)
    assert json.loads(delivery.body) == {"complaint": "first complaint"}


def test_the_same_id_with_the_same_body_still_gets_the_first_answer(client, demo, on_commit):
    webhook_id = _id()
    with on_commit():
        first = post_webhook(client, {"complaint": "first complaint"}, webhook_id=webhook_id)
    with on_commit():
        again = post_webhook(client, {"complaint": "first complaint"}, webhook_id=webhook_id)
    assert (again.status_code, again.json()) == (202, first.json())
    assert WorkflowSession.objects.count() == 1
    assert WebhookDelivery.objects.get(webhook_id=webhook_id).duplicates == 1


def test_a_delivery_keeps_the_digest_of_its_raw_body(client, demo, on_commit):
    webhook_id = _id()
    with on_commit():
        post_webhook(client, {"complaint": "first complaint"}, webhook_id=webhook_id)
    raw = json.dumps({"complaint": "first complaint"}).encode()
    assert WebhookDelivery.objects.get(webhook_id=webhook_id).body_sha256 == hashlib.sha256(raw).hexdigest()


def test_a_delivery_stored_before_digests_answers_any_body_as_a_copy(client, demo, on_commit):
    """Rows from before the digest have ``body_sha256 = ""``: unknown, treated as the same body."""
    webhook_id = _id()
    with on_commit():
        first = post_webhook(client, {"complaint": "first complaint"}, webhook_id=webhook_id)
    WebhookDelivery.objects.filter(webhook_id=webhook_id).update(body_sha256="")
    with on_commit():
        other = post_webhook(client, {"complaint": "a different complaint"}, webhook_id=webhook_id)
    assert (other.status_code, other.json()) == (202, first.json())
    assert WorkflowSession.objects.count() == 1


def test_a_racing_copy_with_another_body_is_refused(client, demo, on_commit, monkeypatch):
    """Two copies at once: the one that loses the unique constraint compares the bodies too."""
    webhook_id = _id()
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    with on_commit():
        services.webhook_receive(endpoint=endpoint, webhook_id=webhook_id, body=b'{"complaint": "first"}')
    monkeypatch.setattr(services, "_repeat", lambda *args: None)  # it checked before the first committed
    with on_commit():
        other = services.webhook_receive(endpoint=endpoint, webhook_id=webhook_id, body=b'{"complaint": "second"}')
        same = services.webhook_receive(endpoint=endpoint, webhook_id=webhook_id, body=b'{"complaint": "first"}')
    assert (other.status, other.body["error"]["code"]) == (422, "webhook_id_reused")
    assert same.status == 202
    assert WorkflowSession.objects.count() == 1


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
