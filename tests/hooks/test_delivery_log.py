"""Every verified delivery is recorded and audited; bodies are kept for replay (up to a cap); admins replay."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, post_webhook, signed_headers


def test_a_delivery_keeps_its_body_and_is_audited(demo, client, on_commit):
    body = json.dumps({"complaint": COMPLAINT})
    with on_commit():
        response = client.post(
            "/hooks/email-review/",
            body,
            content_type="application/json",
            headers=signed_headers(body, webhook_id="msg_kept"),
            REMOTE_ADDR="192.0.2.9",
        )
    delivery = WebhookDelivery.objects.get(webhook_id="msg_kept")
    assert delivery.body_kept
    assert json.loads(delivery.body) == {"complaint": COMPLAINT}
    entry = AuditEntry.objects.get(action="webhook.delivery")
    assert (entry.actor, entry.ip) == ("webhook:email-review", "192.0.2.9")
    assert entry.after == {"status": 202, "outcome": "accepted", "session_id": response.json()["session_id"]}
    assert entry.detail == {"webhook_id": "msg_kept"}


def test_a_body_over_the_keep_cap_is_not_kept(demo, client, on_commit, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WEBHOOK_KEEP_BYTES": 10}
    with on_commit():
        post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_big")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_big")
    assert (delivery.body_kept, delivery.body) == (False, "")


def test_duplicates_are_counted_on_the_first_delivery_and_audited(demo, client, on_commit):
    with on_commit():
        for _ in range(3):
            post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_dup")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_dup")
    assert delivery.duplicates == 2
    outcomes = [e.after["outcome"] for e in AuditEntry.objects.filter(action="webhook.delivery").order_by("id")]
    assert outcomes == ["accepted", "duplicate", "duplicate"]


def test_a_refused_body_is_recorded_with_its_error(demo, client):
    post_webhook(client, {"complaint": ""}, webhook_id="msg_empty")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_empty")
    assert (delivery.outcome, delivery.status_code, delivery.session) == ("rejected", 400, None)
    assert delivery.error


@pytest.fixture
def admin_user(django_user_model, demo):
    return django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-1234")


def test_an_admin_replays_a_delivery_as_a_new_one(client, admin_user, on_commit):
    with on_commit():
        post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_orig")
    original = WebhookDelivery.objects.get(webhook_id="msg_orig")
    client.force_login(admin_user)
    with on_commit():
        response = client.post("/admin/hooks/webhookdelivery/", {"action": "replay", "_selected_action": [original.pk]})
    assert response.status_code == 302
    replay = WebhookDelivery.objects.get(replay_of=original)
    assert replay.webhook_id == "msg_orig:replay:1"
    assert replay.session_id and replay.session_id != original.session_id
    assert WorkflowSession.objects.count() == 2
    assert AuditEntry.objects.filter(action="webhook.replay", actor="user:root").exists()


def test_the_auditor_cannot_replay(client, auditor, on_commit):
    with on_commit():
        post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_a")
    original = WebhookDelivery.objects.get(webhook_id="msg_a")
    client.force_login(auditor)
    page = client.get("/admin/hooks/webhookdelivery/")
    assert page.status_code == 200
    assert b'value="replay"' not in page.content
    client.post("/admin/hooks/webhookdelivery/", {"action": "replay", "_selected_action": [original.pk]})
    assert WebhookDelivery.objects.count() == 1
    assert WorkflowSession.objects.count() == 1


def test_the_auditor_does_not_see_the_secrets(client, auditor):
    client.force_login(auditor)
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    page = client.get(f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200
    assert endpoint.secrets.get().secret.encode() not in page.content


@pytest.mark.django_db(transaction=True)
def test_four_copies_at_the_same_moment_start_one_session(demo_tx):
    from django.test import Client

    barrier = threading.Barrier(4)
    answers = []

    def send():
        barrier.wait()
        try:
            answers.append(post_webhook(Client(), {"complaint": COMPLAINT}, webhook_id="msg_race"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [a.status_code for a in answers] == [202] * 4
    assert len({a.json()["session_id"] for a in answers}) == 1
    assert WorkflowSession.objects.count() == 1
    assert WebhookDelivery.objects.get(webhook_id="msg_race").duplicates == 3


def test_h18_a_redelivered_webhook_id_is_a_duplicate_after_the_session_is_reset(demo, client, on_commit):
    with on_commit():
        first = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_h18")
    session = WorkflowSession.objects.get(pk=first.json()["session_id"])
    checkpoint = session.checkpoints.order_by("created_at").first()
    WorkflowSession.objects.filter(pk=session.pk).update(checkpoint=checkpoint.data, checkpoint_id=checkpoint.pk)
    with on_commit():
        again = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_h18")
    assert again.json() == first.json()
    assert WorkflowSession.objects.count() == 1
