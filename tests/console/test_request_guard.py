"""A NUL in the URL or a header is refused with a 400 before any view (PostgreSQL cannot store it)."""

from __future__ import annotations

import json

import pytest

from reviewconsole.console.request_guard import MESSAGE
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.api.conftest import auth, make_api_client


@pytest.mark.parametrize("path", ["/inbox/?q=a%00b", "/inbox/items.json?q=a%00b", "/inbox/?a%00=1"])
def test_a_nul_in_the_query_gets_a_400_page(manager, client, path):
    client.force_login(manager)
    response = client.get(path)
    assert response.status_code == 400
    assert MESSAGE in response.content.decode()


def test_a_nul_in_an_api_path_or_header_gets_a_json_400_and_starts_nothing(demo, client):
    _, token = make_api_client()
    in_path = client.get("/api/v1/sessions/a%00b", headers=auth(token))
    body = json.dumps({"workflow": "email-review", "input": {"complaint": "late"}})
    in_header = client.post("/api/v1/sessions", body, content_type="application/json", headers=auth(token, "k\x00"))
    for response in (in_path, in_header):
        expected = {"error": {"code": "invalid_request", "message": MESSAGE}}
        assert (response.status_code, response.json()) == (400, expected)
    assert WorkflowSession.objects.count() == 0


def test_a_request_without_a_nul_passes(manager, client):
    client.force_login(manager)
    assert client.get("/inbox/?q=ab").status_code == 200


def test_a_page_script_asking_for_json_gets_the_refusal_as_json(manager, admin_user, client):
    """The inbox's scripts fetch ``items.json`` with ``Accept: application/json``: a refused
    request answers in the JSON error format there too, not with an HTML page."""
    client.force_login(manager)
    nul = client.get("/inbox/items.json?q=a%00b", headers={"Accept": "application/json"})
    assert (nul.status_code, nul.json()) == (400, {"error": {"code": "invalid_request", "message": MESSAGE}})
    client.force_login(admin_user)
    overflow = client.get(
        "/admin/workflow_sessions/workflowsession/?created_at__year=99999999999999999999",
        headers={"Accept": "application/json"},
    )
    assert overflow.status_code == 400
    assert overflow.json()["error"]["code"] == "invalid_request"
