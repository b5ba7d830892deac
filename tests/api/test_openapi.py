"""The OpenAPI document is served at a stable URL, and schemathesis runs the API against it.

For every input schemathesis generates (bodies, parameters, headers, the Idempotency-Key): no 5xx,
the answer fits the document, and nothing is half-stored: a refused write leaves every table as it
was, and an accepted one leaves each new session with its first event.
"""

from __future__ import annotations

import re

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from reviewconsole.api.models import IdempotencyRecord
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Checkpoint, Event, WorkflowSession
from tests.api.conftest import make_api_client, post
from tests.conftest import COMPLAINT

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


def test_the_document_is_served_and_names_every_operation(client, db):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["info"]["title"] == "reviewconsole API"
    operations = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert operations == {
        ("POST", "/api/v1/sessions"),
        ("GET", "/api/v1/sessions/{session_id}"),
        ("GET", "/api/v1/interrupts"),
        ("POST", "/api/v1/sessions/{session_id}/resume"),
        ("POST", "/api/v1/sessions/{session_id}/cancel"),
        ("POST", "/api/v1/reviews"),
        ("GET", "/api/v1/reviews/{review_id}"),
        ("POST", "/api/v1/reviews/{review_id}/cancel"),
        *(
            ("POST", f"/api/v1/sessions/{{session_id}}/interrupts/{{interrupt_id}}/{action}")
            for action in ("defer", "release", "escalate", "cancel", "comments")
        ),
        ("GET", "/api/v1/sessions/{session_id}/interrupts/{interrupt_id}/comments"),
    }
    schemes = document["components"]["securitySchemes"].values()
    assert [(s["type"], s["scheme"]) for s in schemes] == [("http", "bearer")]
    assert client.get("/api/v1/docs").status_code == 200


def _counts():
    return {
        "sessions": WorkflowSession.objects.count(),
        "events": Event.objects.count(),
        "checkpoints": Checkpoint.objects.count(),
        "answers": Answer.objects.count(),
        "idempotency": IdempotencyRecord.objects.count(),
        "interrupts": sorted(Item.objects.values_list("status", flat=True)),
        "statuses": sorted(WorkflowSession.objects.values_list("status", flat=True)),
    }


@pytest.fixture
def keep_connection(world):
    """The WSGI app would close the test's database connection after each request; Django's test
    client avoids that the same way (and connects the receivers again after each of its own
    requests, so this comes after ``world``)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(demo, client, on_commit):
    """A token and a session waiting on its interrupt, for generated requests to aim at."""
    _, token = make_api_client("fuzzer")
    with on_commit():
        response = post(
            client, "/api/v1/sessions", {"workflow": "email-review", "input": {"complaint": COMPLAINT}}, token
        )
        review = post(client, "/api/v1/reviews", {"title": "Fuzz", "message": "Check", "queue": "support"}, token)
    return {"token": token, "session_id": response.json()["session_id"], "review_id": review.json()["id"]}


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_against_its_document(case, world, keep_connection):
    if "session_id" in (case.path_parameters or {}) and len(str(case.path_parameters["session_id"])) % 2 == 0:
        case.path_parameters["session_id"] = world["session_id"]  # half the cases aim at a real session
    if "review_id" in (case.path_parameters or {}) and len(str(case.path_parameters["review_id"])) % 2 == 0:
        case.path_parameters["review_id"] = world["review_id"]  # and at a real review
    wait = (case.query or {}).get("wait")
    if isinstance(wait, str) and re.fullmatch(r"[0-9]+(\.[0-9]+)?", wait) and 0 < float(wait) <= 60:
        case.query["wait"] = "0.01"  # a long-poll held the full minute would only slow the run down
    before = _counts()
    response = case.call(headers={"Authorization": f"Bearer {world['token']}"})
    case.validate_response(response, checks=[not_a_server_error])
    after = _counts()
    if response.status_code >= 300 or case.method == "GET":
        assert after == before, f"{case.method} {case.formatted_path} answered {response.status_code} yet changed rows"
    for session in WorkflowSession.objects.all():
        assert session.events.exists(), f"session {session.id} was stored without its first event"
