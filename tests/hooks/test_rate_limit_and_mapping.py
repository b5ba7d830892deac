"""Per-endpoint rate limits (shared through the database) and input mappings."""

from __future__ import annotations

from reviewconsole.hooks.models import RateWindow, WebhookEndpoint
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, post_webhook


def test_over_the_limit_answers_429_with_retry_after(demo, client, on_commit):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=2)
    with on_commit():
        answers = [post_webhook(client, {"complaint": f"{COMPLAINT} {n}"}) for n in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429]
    refused = answers[2]
    assert refused.json()["error"] == "rate_limited"
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
    assert response.json()["errors"] == [{"path": ["complaint"], "message": "Field required"}]
