"""Per-endpoint rate limits (shared through the database) and input mappings."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from django.utils import timezone

from reviewconsole.audit.models import AuditEntry
from reviewconsole.hooks import ratelimit, services
from reviewconsole.hooks.models import RateWindow, WebhookDelivery, WebhookEndpoint
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, post_webhook, signed_headers

URL = "/hooks/email-review/"


@pytest.fixture(autouse=True)
def one_window(monkeypatch):
    """The rate limit's clock stands in the middle of one minute: a test's deliveries share one
    window however slowly a busy machine sends them (its windows are whole minutes)."""
    middle = timezone.now().replace(second=30, microsecond=0)
    monkeypatch.setattr(ratelimit, "timezone", SimpleNamespace(now=lambda: middle))


def test_over_the_limit_answers_429_with_retry_after(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=2)
    with on_commit():
        answers = [post_webhook(client, {"complaint": f"{COMPLAINT} {n}"}) for n in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429]
    refused = answers[2]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert WorkflowSession.objects.count() == 2


def test_the_count_lives_in_the_database_for_every_process(demo, client, on_commit):
    from django.test import Client

    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=1)
    with on_commit():
        assert post_webhook(client, {"complaint": COMPLAINT}).status_code == 202
    # Another web process (a fresh client, nothing shared in memory) sees the same count.
    assert post_webhook(Client(), {"complaint": COMPLAINT}).status_code == 429
    assert RateWindow.objects.get().count == 2


def test_endpoints_are_limited_separately(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=1)
    with on_commit():
        post_webhook(client, {"complaint": COMPLAINT})
        response = post_webhook(client, {"order_id": "A-1", "amount": 20.0, "reason": "late"}, slug="refund-approval")
    assert response.status_code == 202


def test_unsigned_requests_do_not_use_up_the_limit(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=1)
    for _ in range(5):
        client.post("/hooks/email-review/", "{}", content_type="application/json")
    with on_commit():
        assert post_webhook(client, {"complaint": COMPLAINT}).status_code == 202


def test_replayed_copies_get_their_answer_without_using_up_the_limit(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=2)
    body = json.dumps({"complaint": COMPLAINT})
    captured = signed_headers(body, webhook_id="msg_captured")
    with on_commit():
        first = client.post(URL, body, content_type="application/json", headers=captured)
        copies = [client.post(URL, body, content_type="application/json", headers=captured) for _ in range(5)]
        fresh = post_webhook(client, {"complaint": f"{COMPLAINT} again"})
    assert first.status_code == 202
    assert {(c.status_code, c.content) for c in copies} == {(202, first.content)}
    assert fresh.status_code == 202  # the sender's next delivery is not refused
    assert RateWindow.objects.get().count == 2
    assert WebhookDelivery.objects.get(webhook_id="msg_captured").duplicates == 5
    assert WorkflowSession.objects.count() == 2
    assert post_webhook(client, {"complaint": COMPLAINT}).status_code == 429  # new deliveries still counted


def test_a_copy_with_a_bad_signature_is_refused_before_the_stored_answer(demo, client, on_commit):
    with on_commit():
        assert post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_first").status_code == 202
    body = json.dumps({"complaint": COMPLAINT})
    forged = {**signed_headers(body, webhook_id="msg_first"), "webhook-signature": "v1,AAAA"}
    response = client.post(URL, body, content_type="application/json", headers=forged)
    assert response.status_code == 401
    assert WebhookDelivery.objects.get(webhook_id="msg_first").duplicates == 0


def test_copies_are_counted_but_audited_only_up_to_a_cap(demo, client, on_commit, monkeypatch):
    monkeypatch.setattr(services, "AUDITED_DUPLICATES", 2)
    with on_commit():
        for _ in range(5):
            post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_flood")
    assert WebhookDelivery.objects.get(webhook_id="msg_flood").duplicates == 4
    outcomes = [e.after["outcome"] for e in AuditEntry.objects.filter(action="webhook.delivery").order_by("id")]
    assert outcomes == ["accepted", "duplicate", "duplicate"]


def test_a_mapping_builds_the_input_from_the_body(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(input_mapping={"complaint": "ticket.messages.0.text"})
    with on_commit():
        response = post_webhook(client, {"ticket": {"id": 7, "messages": [{"text": COMPLAINT}]}})
    assert response.status_code == 202
    assert WorkflowSession.objects.get().state["complaint"] == COMPLAINT


def test_a_mapping_that_finds_nothing_names_the_field(demo, client):
    WebhookEndpoint.objects.filter(slug="email-review").update(input_mapping={"complaint": "ticket.body"})
    response = post_webhook(client, {"ticket": "not an object"})
    assert response.status_code == 400
    assert response.json()["error"]["errors"] == [{"path": ["complaint"], "message": "Field required"}]


def test_a_mapping_index_in_other_digits_finds_nothing(demo, client):
    """`str.isdigit` takes "²", which `int` refuses: no such list index, so the field is missing."""
    WebhookEndpoint.objects.filter(slug="email-review").update(input_mapping={"complaint": "messages.\u00b2"})
    response = post_webhook(client, {"messages": ["a", "b", COMPLAINT]})
    assert response.status_code == 400
    assert response.json()["error"]["errors"] == [{"path": ["complaint"], "message": "Field required"}]
