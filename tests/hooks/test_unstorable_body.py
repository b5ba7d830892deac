"""A signed webhook whose body holds what no database column can (NUL, non-finite numbers): a 400,
recorded as a refused delivery, so that the sender's retries get the same answer, never a 500."""

from __future__ import annotations

import pytest

from reviewconsole.hooks.models import WebhookDelivery
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import signed_headers

URL = "/hooks/email-review/"


def _post(client, body, webhook_id):
    return client.post(URL, body, content_type="application/json", headers=signed_headers(body, webhook_id=webhook_id))


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ('{"complaint": "a\\u0000b"}', ["complaint"]),
        ('{"complaint": "ok", "x\\u0000": 1}', []),
        ('{"complaint": "ok", "extra": {"n": 1e400}}', ["extra", "n"]),
        ('{"complaint": "\\udc00"}', ["complaint"]),
    ],
)
def test_a_body_with_an_unstorable_value_gets_400_and_a_refused_delivery(demo, client, on_commit, body, path):
    with on_commit():
        response = _post(client, body, "msg_nul")
        again = _post(client, body, "msg_nul")  # the sender's retry
    assert response.status_code == 400
    answer = response.json()
    assert answer["error"]["code"] == "invalid_body"
    assert [e["path"] for e in answer["error"]["errors"]] == [path]
    assert (again.status_code, again.json()) == (400, answer)
    assert WorkflowSession.objects.count() == 0
    delivery = WebhookDelivery.objects.get(webhook_id="msg_nul")
    assert (delivery.outcome, delivery.status_code, delivery.duplicates) == ("rejected", 400, 1)
    assert "\x00" not in delivery.error and delivery.body == body


def test_a_raw_nul_byte_is_invalid_json_and_its_body_is_not_kept(demo, client):
    body = '{"complaint": "a\x00b"}'
    response = _post(client, body, "msg_raw_nul")
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_json")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_raw_nul")
    assert (delivery.body, delivery.body_kept) == ("", False)
