"""A webhook endpoint's thread key: a delivery for a key whose session is open follows the
workflow's ``on_arrival`` (reject 409 ``session_waiting``, queue, supersede), each recorded."""

from __future__ import annotations

import dataclasses
import json

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint, WebhookSecret
from reviewconsole.hooks.replay import webhook_replay
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Arrival, WorkflowSession
from reviewconsole.workflows import registry
from tests.conftest import post_webhook, signed_headers

VIP = {"customer_id": "c123"}


@pytest.fixture
def keyed(demo):
    def use(thread_key="/customer_id", policy=None, monkeypatch=None):
        WebhookEndpoint.objects.filter(slug="vip-discount").update(thread_key=thread_key)
        if policy is not None:
            specs = registry.current().specs
            monkeypatch.setitem(specs, "vip-discount", dataclasses.replace(specs["vip-discount"], on_arrival=policy))

    return use


def send(client, on_commit, data=VIP, **kwargs):
    with on_commit():
        return post_webhook(client, data, slug="vip-discount", **kwargs)


def test_reject_answers_409_naming_the_waiting_session_and_audits_the_delivery(client, keyed, on_commit):
    """The refusal is audited, not stored: a stored one would be replayed to the sender's retries
    for ever, also once the waiting session has ended (test_webhook_id_reuse.py)."""
    keyed()
    first = send(client, on_commit)
    assert first.status_code == 202
    session_id = first.json()["session_id"]
    item = Item.objects.get(session_id=session_id)
    second = send(client, on_commit, {"customer_id": "c123", "message": "again"})
    assert second.status_code == 409
    error = second.json()["error"]
    assert (error["code"], error["session_id"], error["pending"]) == (
        "session_waiting",
        session_id,
        [item.interrupt_id],
    )
    assert WorkflowSession.objects.count() == 1
    assert not WebhookDelivery.objects.filter(status_code=409).exists()
    [refused] = AuditEntry.objects.filter(action="webhook.delivery", after__status=409)
    assert refused.after["outcome"] == "rejected"
    assert WorkflowSession.objects.get(pk=session_id).correlation_key == "c123"
    [entry] = AuditEntry.objects.filter(action="session.arrival")
    assert (entry.actor, entry.target_id, entry.detail["outcome"]) == ("webhook:vip-discount", session_id, "rejected")


def test_queue_answers_202_queued_and_keeps_the_input(client, keyed, on_commit, monkeypatch):
    keyed(policy="queue", monkeypatch=monkeypatch)
    session_id = send(client, on_commit).json()["session_id"]
    queued = send(client, on_commit, {"customer_id": "c123", "message": "later"})
    assert queued.status_code == 202, queued.content
    answer = queued.json()
    assert (answer["status"], answer["waiting_session_id"]) == ("queued", session_id)
    arrival = Arrival.objects.get(pk=answer["arrival_id"])
    assert (arrival.status, arrival.data["message"], arrival.user_id) == ("queued", "later", "webhook:vip-discount")
    assert WebhookDelivery.objects.filter(outcome="accepted").count() == 2


def test_supersede_starts_the_next_session_and_supersedes_the_pending_item(client, keyed, on_commit, monkeypatch):
    keyed(policy="supersede", monkeypatch=monkeypatch)
    old = send(client, on_commit).json()["session_id"]
    newer = send(client, on_commit, {"customer_id": "c123", "message": "newer"})
    assert newer.status_code == 202
    assert newer.json()["superseded"] == [old] and newer.json()["session_id"] != old
    assert Item.objects.get(session_id=old).display_status == "superseded"
    assert Item.objects.get(session_id=newer.json()["session_id"]).status == "pending"


def _with_header(client, on_commit, thread):
    secret = WebhookSecret.objects.filter(endpoint__slug="vip-discount").values_list("secret", flat=True).first()
    body = json.dumps(VIP)
    headers = {**signed_headers(body, secret=secret), "X-Thread-Id": thread}
    with on_commit():
        return client.post("/hooks/vip-discount/", body, content_type="application/json", headers=headers)


def test_a_header_thread_key_and_a_missing_key(client, keyed, on_commit):
    keyed("header:X-Thread-Id")
    first = _with_header(client, on_commit, "thread-9")
    assert first.status_code == 202, first.content
    assert WorkflowSession.objects.get(pk=first.json()["session_id"]).correlation_key == "thread-9"
    assert _with_header(client, on_commit, "thread-9").status_code == 409
    missing = send(client, on_commit)
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "thread_key_missing"
    assert WorkflowSession.objects.count() == 1


def test_a_replay_keeps_the_thread_key_a_header_named(client, keyed, on_commit, admin_user):
    """Found by the last session's review: the sender's headers are not kept, so a replay of a
    delivery keyed by a header was refused (thread_key_missing). The key it named is kept."""
    keyed("header:X-Thread-Id")
    first = _with_header(client, on_commit, "thread-42")
    assert first.status_code == 202, first.content
    original = WebhookDelivery.objects.get(session_id=first.json()["session_id"])
    assert original.thread_key == "thread-42"
    WorkflowSession.objects.filter(pk=first.json()["session_id"]).update(status="completed")
    with on_commit():
        replayed = webhook_replay(delivery=original, user=admin_user)
    assert replayed.status == 202, replayed.body
    again = WorkflowSession.objects.get(pk=replayed.body["session_id"])
    assert again.correlation_key == "thread-42"
    assert WebhookDelivery.objects.get(replay_of=original).thread_key == "thread-42"
    WebhookDelivery.objects.filter(pk=original.pk).update(thread_key="")  # a delivery kept before keys were
    original.refresh_from_db()
    refused = webhook_replay(delivery=original, user=admin_user)
    assert (refused.status, refused.body["error"]["code"]) == (400, "thread_key_missing")
    assert "A replay uses the key the original delivery named, and it named none." in refused.body["error"]["message"]
