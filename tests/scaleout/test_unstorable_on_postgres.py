"""On PostgreSQL, whose ``text`` and ``jsonb`` cannot hold U+0000: outside input with a NUL is a
400 from every door, never a 500 (``DataError``), and a refused webhook is recorded so that the
sender's retries get the same answer instead of failing forever."""

from __future__ import annotations

import json

import pytest

from reviewconsole.hooks.models import WebhookDelivery
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, WorkflowSession
from tests.api.conftest import auth, make_api_client
from tests.conftest import signed_headers

pytestmark = pytest.mark.scaleout


def _hook(client, body, webhook_id):
    headers = signed_headers(body, webhook_id=webhook_id)
    return client.post("/hooks/email-review/", body, content_type="application/json", headers=headers)


@pytest.mark.parametrize(
    ("body", "error"),
    [('{"complaint": "a\\u0000b"}', "invalid_body"), ('{"complaint": "a\x00b"}', "invalid_json")],
)
def test_a_signed_webhook_with_a_nul_gets_400_and_is_recorded(postgres, demo, client, body, error):
    first = _hook(client, body, "msg_pg_nul")
    retry = _hook(client, body, "msg_pg_nul")
    assert (first.status_code, first.json()["error"]["code"]) == (400, error)
    assert (retry.status_code, retry.json()) == (400, first.json())
    delivery = WebhookDelivery.objects.get(webhook_id="msg_pg_nul")
    assert (delivery.outcome, delivery.duplicates) == ("rejected", 1)
    assert WorkflowSession.objects.count() == 0


def test_an_api_start_with_a_nul_gets_400(postgres, demo, client):
    _, token = make_api_client()
    body = json.dumps({"workflow": "email-review", "input": {"complaint": "a\u0000b"}})
    response = client.post("/api/v1/sessions", body, content_type="application/json", headers=auth(token, "k-nul"))
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")
    assert WorkflowSession.objects.count() == 0


def test_inbox_feedback_with_a_nul_gets_400(postgres, manager, start_review, client):
    _, item = start_review()
    client.force_login(manager)
    response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "revise", "feedback": "short\x00er"})
    assert response.status_code == 400
    assert (Item.objects.get(pk=item.pk).status, Answer.objects.count()) == ("pending", 0)


def test_a_nul_in_a_search_or_an_api_header_gets_400(postgres, manager, client):
    client.force_login(manager)
    assert client.get("/inbox/?q=a%00b").status_code == 400
    _, token = make_api_client()
    body = json.dumps({"workflow": "email-review", "input": {"complaint": "late"}})
    response = client.post("/api/v1/sessions", body, content_type="application/json", headers=auth(token, "k\x00"))
    assert response.status_code == 400
    assert WorkflowSession.objects.count() == 0
