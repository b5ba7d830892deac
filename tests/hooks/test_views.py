"""``POST /hooks/<slug>/``: signed webhooks start sessions once per ``webhook-id``."""

from __future__ import annotations

import base64
import json
import time

import pytest

from reviewconsole.hooks.models import WebhookDelivery, WebhookEndpoint, WebhookSecret
from reviewconsole.hooks.services import sign
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, DEMO_SECRET, post_webhook, signed_headers

URL = "/hooks/email-review/"


def _post(client, body, headers, content_type="application/json"):
    return client.post(URL, body, content_type=content_type, headers=headers)


def test_it_starts_a_session_and_answers_202(demo, client, on_commit):
    with on_commit():
        response = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_1")
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"session_id", "session_url", "url"}
    assert body["session_url"] == f"http://testserver/api/v1/sessions/{body['session_id']}"
    assert body["url"] == f"/api/sessions/{body['session_id']}/"
    session = WorkflowSession.objects.get(pk=body["session_id"])
    assert session.workflow == "email-review"
    assert session.user_id == "webhook:email-review"
    assert session.status == "waiting"
    assert session.state["complaint"] == COMPLAINT
    interrupt = Item.objects.get(session=session)
    assert (interrupt.status, interrupt.queue.slug) == ("pending", "support")
    delivery = WebhookDelivery.objects.get(webhook_id="msg_1")
    assert (delivery.outcome, delivery.status_code, delivery.session_id) == ("accepted", 202, session.id)


def test_it_answers_a_repeated_webhook_id_with_the_same_session(demo, client, on_commit):
    with on_commit():
        first = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_same")
        second = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_same")
    assert (first.status_code, second.status_code) == (202, 202)
    assert second.json() == first.json()
    assert WorkflowSession.objects.count() == 1
    assert Item.objects.count() == 1
    assert WebhookDelivery.objects.filter(webhook_id="msg_same").count() == 1


def test_it_refuses_the_same_id_with_a_different_body(demo, client, on_commit):
    """Answering the first 202 dropped the other body unseen: it is 422 ``webhook_id_reused``."""
    with on_commit():
        first = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_replay")
        second = post_webhook(client, {"complaint": "Something else"}, webhook_id="msg_replay")
    assert first.status_code == 202
    assert (second.status_code, second.json()["error"]["code"]) == (422, "webhook_id_reused")
    assert WorkflowSession.objects.get().state["complaint"] == COMPLAINT


def test_it_rejects_bad_signature(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    headers = signed_headers(body, secret="whsec_" + "A" * 44)
    response = _post(client, body, headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "bad_signature"
    assert WorkflowSession.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


def test_it_rejects_a_tampered_body(demo, client):
    headers = signed_headers(json.dumps({"complaint": COMPLAINT}))
    response = _post(client, json.dumps({"complaint": "tampered"}), headers)
    assert response.status_code == 401
    assert WorkflowSession.objects.count() == 0


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_it_rejects_missing_signature_headers(demo, client, missing):
    body = json.dumps({"complaint": COMPLAINT})
    headers = signed_headers(body)
    del headers[missing]
    response = _post(client, body, headers)
    assert response.status_code == 401
    assert WorkflowSession.objects.count() == 0


def test_it_rejects_an_expired_timestamp(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, signed_headers(body, timestamp=int(time.time()) - 3600))
    assert response.status_code == 401
    assert WorkflowSession.objects.count() == 0


def test_it_accepts_any_current_secret_of_the_endpoint(demo, client, on_commit):
    endpoint = WebhookEndpoint.objects.get(slug="email-review")
    rotated = "whsec_" + base64.b64encode(b"B" * 32).decode()
    WebhookSecret.objects.create(endpoint=endpoint, secret=rotated, label="rotated")
    with on_commit():
        response = post_webhook(client, {"complaint": COMPLAINT}, secret=rotated)
    assert response.status_code == 202
    assert WorkflowSession.objects.count() == 1


def test_it_rejects_invalid_body_with_field_errors(demo, client):
    response = post_webhook(client, {"complaint": ""}, webhook_id="msg_bad")
    assert response.status_code == 400
    body = response.json()
    assert body["error"]["code"] == "invalid_body"
    assert body["error"]["errors"] == [{"path": ["complaint"], "message": "String should have at least 1 character"}]
    assert WorkflowSession.objects.count() == 0
    assert WebhookDelivery.objects.get(webhook_id="msg_bad").outcome == "rejected"


def test_it_names_a_missing_field(demo, client):
    response = post_webhook(client, {"text": COMPLAINT})
    assert response.status_code == 400
    assert response.json()["error"]["errors"] == [{"path": ["complaint"], "message": "Field required"}]


@pytest.mark.parametrize("data", [[1, 2], None, 3, {"complaint": 5}, {"complaint": ["x"]}])
def test_it_rejects_bodies_of_the_wrong_shape(demo, client, data):
    response = post_webhook(client, data)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_body"
    assert WorkflowSession.objects.count() == 0


def test_it_rejects_invalid_json(demo, client):
    body = '{"complaint": '
    response = _post(client, body, signed_headers(body))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
    assert WorkflowSession.objects.count() == 0


def test_it_rejects_get_in_the_one_json_error_format(demo, client):
    response = client.get(URL)
    assert (response.status_code, response["Allow"]) == (405, "POST")
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_it_404s_for_an_unknown_endpoint(demo, client):
    response = post_webhook(client, {"complaint": COMPLAINT}, slug="nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_endpoint"


def test_it_404s_for_a_disabled_endpoint(demo, client):
    WebhookEndpoint.objects.filter(slug="email-review").update(enabled=False)
    response = post_webhook(client, {"complaint": COMPLAINT})
    assert response.status_code == 404
    assert WorkflowSession.objects.count() == 0


def test_it_rejects_other_content_types(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, signed_headers(body), content_type="text/plain")
    assert response.status_code == 415
    assert WorkflowSession.objects.count() == 0


def test_it_rejects_a_body_over_the_limit(demo, client, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WEBHOOK_MAX_BYTES": 100}
    body = json.dumps({"complaint": "x" * 200})
    response = _post(client, body, signed_headers(body))
    assert response.status_code == 413
    assert WorkflowSession.objects.count() == 0


def test_a_content_length_in_other_digits_is_a_413_not_a_500(demo, client):
    """`str.isdigit` takes "²", which `int` refuses."""
    body = json.dumps({"complaint": COMPLAINT})
    response = client.post(URL, body, content_type="application/json", headers=signed_headers(body), CONTENT_LENGTH="²")
    assert response.status_code == 413
    assert WorkflowSession.objects.count() == 0


def test_an_endpoint_whose_workflow_is_not_registered_answers_404_unknown_workflow(demo, client):
    """A configuration error, said clearly; nothing stored, so the sender's retry works once fixed."""
    WebhookEndpoint.objects.filter(slug="email-review").update(workflow="no-such-workflow")
    response = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_orphan")
    assert response.status_code == 404
    body = response.json()
    assert body["error"]["code"] == "unknown_workflow"
    assert "'no-such-workflow', which is not registered" in body["error"]["message"]
    assert WorkflowSession.objects.count() == 0
    assert not WebhookDelivery.objects.filter(webhook_id="msg_orphan").exists()

    WebhookEndpoint.objects.filter(slug="email-review").update(workflow="email-review")
    retried = post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_orphan")
    assert retried.status_code == 202


# -- hostile input: never a 500, never a session --------------------------------------------------


def test_it_rejects_a_body_that_is_not_utf8(demo, client):
    body = b'{"complaint": "\xff\xfe broken"}'
    headers = signed_headers(body.decode("latin-1"))
    response = _post(client, body, headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_encoding"
    assert WorkflowSession.objects.count() == 0


@pytest.mark.parametrize(
    "signature",
    ["", "v1", "v1,", "v1,!!!not-base64!!!", "v2,abc", "v1,abc v1", ",,,", "v1,YWJj,extra", "\u00e9\u00e9"],
)
def test_it_answers_401_to_a_malformed_signature(demo, client, signature):
    body = json.dumps({"complaint": COMPLAINT})
    headers = {**signed_headers(body), "webhook-signature": signature}
    response = _post(client, body, headers)
    assert response.status_code == 401
    assert WorkflowSession.objects.count() == 0


@pytest.mark.parametrize("timestamp", ["", "nan", "inf", "-inf", "1e400", "abc", "-99999999999999999999", "12:00"])
def test_it_answers_401_to_a_malformed_timestamp(demo, client, timestamp):
    body = json.dumps({"complaint": COMPLAINT})
    headers = {**signed_headers(body), "webhook-timestamp": timestamp}
    response = _post(client, body, headers)
    assert response.status_code == 401
    assert WorkflowSession.objects.count() == 0


@pytest.mark.parametrize(
    "spelling",
    [
        lambda t: f"{t}.0",
        lambda t: f"+{t}",
        lambda t: f"{t}e0",
        lambda t: f"0{t}.5",
        lambda t: f" {t}",
        lambda t: str(t).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")),
    ],
    ids=["T.0", "+T", "Te0", "0T.5", "space T", "Arabic-Indic digits"],
)
def test_it_answers_401_to_another_spelling_of_the_signed_timestamp(demo, client, spelling):
    body = json.dumps({"complaint": COMPLAINT})
    headers = signed_headers(body)  # signed over the timestamp's digits
    headers["webhook-timestamp"] = spelling(int(headers["webhook-timestamp"]))
    response = _post(client, body, headers)
    assert (response.status_code, response.json()["error"]["code"]) == (401, "bad_signature")
    assert WorkflowSession.objects.count() == 0


def test_it_survives_deeply_nested_json(demo, client):
    body = "[" * 100_000 + "]" * 100_000
    response = _post(client, body, signed_headers(body))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
    assert WorkflowSession.objects.count() == 0


def test_it_refuses_nan_in_the_body(demo, client):
    body = '{"complaint": NaN}'
    response = _post(client, body, signed_headers(body))
    assert response.status_code == 400
    json.loads(response.content)  # the answer itself is strict JSON
    assert WorkflowSession.objects.count() == 0


def test_it_refuses_an_overlong_webhook_id(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, signed_headers(body, webhook_id="x" * 500))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_webhook_id"
    assert WorkflowSession.objects.count() == 0


def _signed_with_id(body, webhook_id):
    timestamp = int(time.time())
    signature = sign(DEMO_SECRET, webhook_id, timestamp, body)
    return {"webhook-id": webhook_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


@pytest.mark.parametrize(
    ("webhook_id", "error"),
    [
        (" ", "invalid_webhook_id"),
        ("   ", "invalid_webhook_id"),
        ("\t", "invalid_webhook_id"),
        ("msg\x1bone", "invalid_webhook_id"),
        ("x" * 201, "invalid_webhook_id"),
        ("msg\x00one", "invalid_request"),  # a NUL in any header: refused before the view
    ],
)
def test_it_refuses_a_signed_blank_control_or_overlong_webhook_id(demo, client, webhook_id, error):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, _signed_with_id(body, webhook_id))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == error
    assert WorkflowSession.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


def test_an_empty_webhook_id_is_a_missing_signature_header(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, _signed_with_id(body, ""))
    assert (response.status_code, response.json()["error"]["code"]) == (401, "bad_signature")
    assert WebhookDelivery.objects.count() == 0


def test_it_never_echoes_the_secret(demo, client):
    body = json.dumps({"complaint": COMPLAINT})
    response = _post(client, body, {**signed_headers(body), "webhook-signature": "v1,AAAA"})
    assert response.status_code == 401
    assert demo["secret"].encode() not in response.content
