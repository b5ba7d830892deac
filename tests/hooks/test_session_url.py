"""The webhook's answer names the session's API URL (issue 13): ``session_url``, absolute on the
host the delivery was sent to, in the accepted answer and every copy's; stored refusals are in
the one JSON error format."""

from __future__ import annotations

import importlib
import json

from django.apps import apps

from reviewconsole.hooks.models import DeliveryOutcome, WebhookDelivery, WebhookEndpoint
from tests.api.conftest import auth, make_api_client
from tests.conftest import COMPLAINT, post_webhook, signed_headers

BODY = json.dumps({"complaint": COMPLAINT})


def _post(client, webhook_id, **extra):
    headers = signed_headers(BODY, webhook_id=webhook_id)
    return client.post("/hooks/email-review/", BODY, content_type="application/json", headers=headers, **extra)


def test_the_session_url_reads_the_session_with_an_api_token(demo, client, on_commit):
    with on_commit():
        answer = post_webhook(client, {"complaint": COMPLAINT}).json()
    _, token = make_api_client()
    read = client.get(answer["session_url"], headers=auth(token))
    assert read.status_code == 200
    assert (read.json()["id"], read.json()["status"]) == (answer["session_id"], "waiting")


def test_the_session_url_is_on_the_host_the_delivery_was_sent_to(demo, client, settings):
    settings.ALLOWED_HOSTS = ["console.example"]
    response = _post(client, "msg_https", HTTP_HOST="console.example", secure=True)
    body = response.json()
    assert body["session_url"] == f"https://console.example/api/v1/sessions/{body['session_id']}"


def test_a_copy_gets_the_session_url_on_the_host_the_copy_was_sent_to(demo, client, settings):
    settings.ALLOWED_HOSTS = ["a.example", "b.example"]
    first = _post(client, "msg_host", HTTP_HOST="a.example").json()
    copy = _post(client, "msg_host", HTTP_HOST="b.example").json()
    assert copy == {**first, "session_url": f"http://b.example/api/v1/sessions/{first['session_id']}"}


def test_a_copy_of_a_delivery_accepted_before_session_url_existed_gets_one(demo, client):
    _post(client, "msg_old")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_old")
    old = {"session_id": delivery.session_id, "url": f"/api/sessions/{delivery.session_id}/"}
    WebhookDelivery.objects.filter(pk=delivery.pk).update(response=old)
    copy = _post(client, "msg_old").json()
    assert copy["session_url"] == f"http://testserver/api/v1/sessions/{delivery.session_id}"


def test_the_migration_nests_stored_flat_refusals(demo):
    migration = importlib.import_module("reviewconsole.hooks.migrations.0004_nested_error_responses")
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    flat = {"error": "invalid_body", "message": "The body does not match.", "errors": [{"path": ["x"]}]}
    refused = WebhookDelivery.objects.create(
        endpoint=endpoint, webhook_id="old-1", outcome=DeliveryOutcome.REJECTED, status_code=400, response=flat
    )
    migration.nest_errors(apps, None)
    refused.refresh_from_db()
    assert refused.response == {
        "error": {"code": "invalid_body", "message": "The body does not match.", "errors": [{"path": ["x"]}]}
    }
    migration.flatten_errors(apps, None)
    refused.refresh_from_db()
    assert refused.response == flat
