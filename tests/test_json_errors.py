"""Every door's JSON refusals have the one shape of ``reviewconsole.json_errors`` (issue 13, point 4):
``{"error": {"code", "message", ...}}``, with each door's status code and ``Retry-After``."""

from __future__ import annotations

import json

import psycopg
import pytest
from django.db import OperationalError

from reviewconsole.error_pages import method_not_allowed
from reviewconsole.hooks.models import WebhookEndpoint, WebhookSecret
from reviewconsole.hooks.services import max_body_bytes
from reviewconsole.inbox.models import Item
from reviewconsole.json_errors import error_body, error_response
from tests.api.conftest import auth, make_api_client
from tests.conftest import COMPLAINT, DEMO_SECRET, signed_headers

JSON = "application/json"
TEXT = "text/plain"
LOCKED = "database is locked"
MIB = 1024 * 1024
ACCEPT_JSON = {"Accept": JSON}
BODY = json.dumps({"complaint": COMPLAINT})


def test_error_body_nests_code_message_and_details():
    assert error_body("rate_limited", "Later.", limit=3) == {
        "error": {"code": "rate_limited", "message": "Later.", "limit": 3}
    }
    with pytest.raises(ValueError):
        error_body("x", "y", message="would replace the message")


def test_error_response_sets_the_status_and_retry_after():
    response = error_response(429, "rate_limited", "Later.", retry_after=7)
    assert (response.status_code, response["Retry-After"], json.loads(response.content)) == (
        429,
        "7",
        {"error": {"code": "rate_limited", "message": "Later."}},
    )
    assert not error_response(400, "invalid_json", "No.").has_header("Retry-After")


def _hook(client, body=BODY, *, slug="email-review", content_type=JSON, **signing):
    headers = signed_headers(body, **signing) if signing.pop("signed", True) else {}
    return client.post(f"/hooks/{slug}/", body, content_type=content_type, headers=headers)


def _database_error(message):
    error = OperationalError(message)
    error.__cause__ = psycopg.OperationalError(message)
    return error


def _hook_during(monkeypatch, client, error):
    def fail(**kwargs):
        raise error

    monkeypatch.setattr("reviewconsole.hooks.views.webhook_receive", fail)
    return _hook(client)


def _rate_limited(client):
    WebhookEndpoint.objects.filter(slug="email-review").update(rate_limit=1)
    _hook(client)  # the window's one delivery (unless the fixture's webhook took it already)
    return _hook(client)


def _id_used_elsewhere(client):
    other = WebhookEndpoint.objects.create(slug="email-review-2", workflow="email-review")
    WebhookSecret.objects.create(endpoint=other, secret=DEMO_SECRET, label="shared")
    headers = signed_headers(BODY)
    assert client.post("/hooks/email-review/", BODY, content_type=JSON, headers=headers).status_code == 202
    return client.post("/hooks/email-review-2/", BODY, content_type=JSON, headers=headers)


def _id_reused(client):
    assert _hook(client, webhook_id="msg_reused").status_code == 202
    return _hook(client, json.dumps({"complaint": "another complaint"}), webhook_id="msg_reused")


def _unknown_workflow(client):
    WebhookEndpoint.objects.filter(slug="email-review").update(workflow="no-such-workflow")
    return _hook(client)


def _decide(client, user, item, data):
    client.force_login(user)
    return client.post(f"/inbox/items/{item.pk}/decide/", data, headers=ACCEPT_JSON)


def _decided_twice(client, user, item):
    assert _decide(client, user, item, {"action": "approve"}).status_code == 200
    # A different decision: the same one again is a no-op returning its receipt (issue 15).
    return _decide(client, user, item, {"action": "reject", "reason": "changed my mind"})


def _claimed(client, personas, item):
    client.force_login(personas.queue_manager)
    assert client.post(f"/inbox/items/{item.pk}/claim/", headers=ACCEPT_JSON).status_code == 200
    client.force_login(personas.reviewer)
    return client.post(f"/inbox/items/{item.pk}/claim/", headers=ACCEPT_JSON)


def _agui(client, workflow="email-review", body=None, token=None, raw=None):
    data = raw if raw is not None else json.dumps(body or {})
    return client.post(f"/agui/{workflow}/", data, content_type=JSON, headers=auth(token) if token else {})


def _scoped_token():
    _, token = make_api_client(name="vip-only", workflows=("vip-discount",))
    return token


CASES = {
    # webhooks
    "hooks unknown_endpoint": (404, "unknown_endpoint", lambda w: _hook(w.client, slug="nope")),
    "hooks body_too_large": (413, "body_too_large", lambda w: _hook(w.client, "x" * (max_body_bytes() + 1))),
    "hooks invalid_encoding": (400, "invalid_encoding", lambda w: _hook(w.client, b"\xff\xfe", signed=False)),
    "hooks bad_signature": (401, "bad_signature", lambda w: _hook(w.client, signed=False)),
    "hooks unsupported_media_type": (415, "unsupported_media_type", lambda w: _hook(w.client, content_type=TEXT)),
    "hooks invalid_webhook_id": (400, "invalid_webhook_id", lambda w: _hook(w.client, webhook_id="   ")),
    "hooks webhook_id_used": (409, "webhook_id_used", lambda w: _id_used_elsewhere(w.client)),
    "hooks webhook_id_reused": (422, "webhook_id_reused", lambda w: _id_reused(w.client)),
    "hooks rate_limited": (429, "rate_limited", lambda w: _rate_limited(w.client)),
    "hooks invalid_json": (400, "invalid_json", lambda w: _hook(w.client, "{not json")),
    "hooks invalid_body": (400, "invalid_body", lambda w: _hook(w.client, "{}")),
    "hooks unknown_workflow": (404, "unknown_workflow", lambda w: _unknown_workflow(w.client)),
    "hooks invalid_request (NUL)": (400, "invalid_request", lambda w: w.client.post("/hooks/a%00b/")),
    "hooks busy": (409, "busy", lambda w: _hook_during(w.monkeypatch, w.client, OperationalError(LOCKED))),
    "hooks database_unavailable": (
        503,
        "database_unavailable",
        lambda w: _hook_during(w.monkeypatch, w.client, _database_error("connection failed")),
    ),
    # the inbox's JSON
    "inbox forbidden": (
        403,
        "forbidden",
        lambda w: w.login(w.personas.reviewer).post(f"/inbox/items/{w.item.pk}/take-over/", headers=ACCEPT_JSON),
    ),
    "inbox action_not_supported": (
        400,
        "action_not_supported",
        lambda w: _decide(w.client, w.personas.reviewer, w.item, {"action": "explode"}),
    ),
    "inbox answer_too_long": (
        400,
        "answer_too_long",
        lambda w: _decide(w.client, w.personas.reviewer, w.item, {"action": "revise", "feedback": "x" * 5001}),
    ),
    "inbox already_decided": (409, "already_decided", lambda w: _decided_twice(w.client, w.personas.reviewer, w.item)),
    "inbox claimed": (409, "claimed", lambda w: _claimed(w.client, w.personas, w.item)),
    # the console's JSON
    "console session_not_failed": (
        409,
        "session_not_failed",
        lambda w: w.login(w.personas.queue_manager).post(f"/sessions/{w.item.session_id}/retry/", headers=ACCEPT_JSON),
    ),
    # the API
    "api unauthorized": (401, "unauthorized", lambda w: w.client.get("/api/v1/interrupts")),
    "api session_not_found": (
        404,
        "session_not_found",
        lambda w: w.client.get("/api/v1/sessions/nope", headers=auth(w.token)),
    ),
    "api invalid_request": (
        400,
        "invalid_request",
        lambda w: w.client.post("/api/v1/sessions", "{}", content_type=JSON, headers=auth(w.token)),
    ),
    "api invalid_request (NUL)": (
        400,
        "invalid_request",
        lambda w: w.client.get("/api/v1/sessions/a%00b", headers=auth(w.token)),
    ),
    # AG-UI before its event stream
    "agui unauthorized": (401, "unauthorized", lambda w: _agui(w.client)),
    "agui unknown_workflow": (404, "unknown_workflow", lambda w: _agui(w.client, "no-such-flow", token=w.token)),
    "agui forbidden": (403, "forbidden", lambda w: _agui(w.client, token=_scoped_token())),
    "agui body_too_large": (413, "body_too_large", lambda w: _agui(w.client, token=w.token, raw="x" * (MIB + 1))),
    "agui invalid_input": (400, "invalid_input", lambda w: _agui(w.client, token=w.token, raw='{"threadId": "t"}')),
}

RETRY_AFTER = {"hooks busy": "1", "hooks database_unavailable": "5"}


class Doors:
    """What the cases need: the test client, the personas, a pending item and an API token."""

    def __init__(self, client, personas, item, token, monkeypatch):
        self.client, self.personas, self.item, self.token, self.monkeypatch = client, personas, item, token, monkeypatch

    def login(self, user):
        self.client.force_login(user)
        return self.client


@pytest.fixture
def doors(client, personas, start_review, monkeypatch):
    _, item = start_review()
    client.logout()
    _, token = make_api_client()
    return Doors(client, personas, Item.objects.get(pk=item.pk), token, monkeypatch)


@pytest.mark.parametrize("case", list(CASES))
def test_every_json_refusal_of_every_door_has_the_one_shape(doors, case):
    status, code, call = CASES[case]
    response = call(doors)
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith(JSON)
    body = json.loads(response.content)
    assert list(body) == ["error"], body
    error = body["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"].strip()
    assert "Traceback" not in error["message"]
    if case in RETRY_AFTER:
        assert response["Retry-After"] == RETRY_AFTER[case]
    if case == "hooks rate_limited":  # the rest of the limit's one-minute window
        assert 0 < int(response["Retry-After"]) <= 60


WRONG_METHODS = {
    # door: (method, path, headers, the Allow header)
    "hooks GET": ("get", "/hooks/email-review/", {}, "POST"),
    "hooks PUT": ("put", "/hooks/email-review/", {}, "POST"),
    "agui GET": ("get", "/agui/email-review/", {}, "POST"),
    "api sessions DELETE": ("delete", "/api/v1/sessions", {}, "POST"),
    "api session cancel GET": ("get", "/api/v1/sessions/s1/cancel", {}, "POST"),
    "api reviews PUT": ("put", "/api/v1/reviews", {}, "POST"),
    "api review cancel GET": ("get", "/api/v1/reviews/r1/cancel", {}, "POST"),
    "inbox decide GET": ("get", "/inbox/items/{item}/decide/", ACCEPT_JSON, "POST"),
    "inbox defer GET": ("get", "/inbox/items/{item}/defer/", ACCEPT_JSON, "POST"),
    "console retry GET": ("get", "/sessions/{session}/retry/", ACCEPT_JSON, "POST"),
    "console status.json POST": ("post", "/sessions/{session}/status.json", ACCEPT_JSON, "GET"),
}


@pytest.mark.parametrize("case", list(WRONG_METHODS))
def test_a_wrong_method_is_a_json_405_with_allow_in_every_door(doors, case):
    method, path, headers, allow = WRONG_METHODS[case]
    doors.login(doors.personas.queue_manager)
    url = path.format(item=doors.item.pk, session=doors.item.session_id)
    response = getattr(doors.client, method)(url, headers={**auth(doors.token), **headers})
    assert response.status_code == 405, response.content[:300]
    assert response["Content-Type"].startswith(JSON)
    assert response["Allow"] == allow
    assert json.loads(response.content) == {
        "error": {
            "code": "method_not_allowed",
            "message": f"{method.upper()} is not allowed here; use {allow}.",
            "allowed": [allow],
        }
    }


def test_a_browsers_wrong_method_keeps_djangos_405(doors):
    doors.login(doors.personas.reviewer)
    response = doors.client.get(f"/inbox/items/{doors.item.pk}/decide/", headers={"Accept": "text/html"})
    assert (response.status_code, response["Allow"]) == (405, "POST")
    assert not response["Content-Type"].startswith(JSON)


def test_method_not_allowed_lists_every_allowed_method(rf):
    response = method_not_allowed(rf.delete("/hooks/x/"), "GET, POST")
    assert (response.status_code, response["Allow"]) == (405, "GET, POST")
    assert json.loads(response.content)["error"] == {
        "code": "method_not_allowed",
        "message": "DELETE is not allowed here; use GET or POST.",
        "allowed": ["GET", "POST"],
    }
