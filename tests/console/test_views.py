"""``GET /api/sessions/<id>/``: whoever may open the session's admin page (view permission on
sessions); status, state, interrupts and the events in ADK JSON; every read audited."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide


@pytest.fixture
def decided(start_review, manager, on_commit):
    """A session whose first draft got feedback and whose second was approved."""
    session, first = start_review()
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="revise", text="shorter")
    second = session.items.get(status="pending")
    with on_commit():
        interrupt_decide(interrupt=second, user=manager, action="approve")
    session.refresh_from_db()
    return session, first, second


def test_it_requires_login(client, decided):
    session, _, _ = decided
    response = client.get(f"/api/sessions/{session.id}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_it_requires_staff(client, manager, decided):
    session, _, _ = decided
    client.force_login(manager)
    response = client.get(f"/api/sessions/{session.id}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_staff_without_view_permission_get_403_as_on_the_admin_page(client, personas, decided):
    session, _, _ = decided
    client.force_login(personas.staff)
    assert client.get(f"/admin/workflow_sessions/workflowsession/{session.id}/change/").status_code == 403
    response = client.get(f"/api/sessions/{session.id}/")
    assert response.status_code == 403
    assert session.id.encode() not in response.content
    assert not AuditEntry.objects.filter(action="session.view").exists()


def test_a_read_is_audited_as_session_view(client, auditor, decided):
    session, _, _ = decided
    client.force_login(auditor)
    assert client.get(f"/api/sessions/{session.id}/", headers={"User-Agent": "probe/1"}).status_code == 200
    entry = AuditEntry.objects.get(action="session.view")
    assert (entry.actor, entry.target_type, entry.target_id) == (
        "user:auditor",
        "workflow_sessions.workflowsession",
        session.id,
    )
    assert (entry.user_agent, entry.detail) == ("probe/1", {"as": "json"})


def test_it_404s_for_an_unknown_session(client, auditor):
    client.force_login(auditor)
    assert client.get("/api/sessions/nope/").status_code == 404


def test_it_rejects_post(client, auditor, decided):
    session, _, _ = decided
    client.force_login(auditor)
    assert client.post(f"/api/sessions/{session.id}/").status_code == 405


def test_it_returns_status_state_interrupts_and_adk_events(client, auditor, decided):
    session, first, second = decided
    client.force_login(auditor)
    response = client.get(f"/api/sessions/{session.id}/")
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["workflow"], body["status"]) == (session.id, "email-review", "completed")
    assert body["state"] == session.state
    assert body["state"]["feedback"] == "shorter"
    assert [(i["id"], i["status"], i["decision"], i["decided_by"]) for i in body["interrupts"]] == [
        (first.interrupt_id, "resolved", "revise", "manager"),
        (second.interrupt_id, "resolved", "approve", "manager"),
    ]
    assert body["interrupts"][0]["url"] == f"/inbox/items/{first.pk}/"

    events = body["events"]
    assert len(events) == session.events.count()
    assert events[0]["author"] == "user"
    assert {"id", "invocationId", "author", "timestamp"} <= set(events[0])
    calls = [
        (e, p["functionCall"]) for e in events for p in e.get("content", {}).get("parts", []) if "functionCall" in p
    ]
    assert [c["id"] for _, c in calls] == [first.interrupt_id, second.interrupt_id]
    assert {c["name"] for _, c in calls} == {"adk_request_input"}
    assert all(c["id"] in e["longRunningToolIds"] for e, c in calls)
    parts = [p for e in events for p in e.get("content", {}).get("parts", [])]
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    assert [(r["id"], r["name"], r["response"]) for r in responses] == [
        (first.interrupt_id, "adk_request_input", {"result": "shorter"}),
        (second.interrupt_id, "adk_request_input", {"result": "approve"}),
    ]
    routes = [e["actions"]["route"] for e in events if (e.get("actions") or {}).get("route")]
    assert routes == ["revise", "approved"]
    paths = [e["nodeInfo"]["path"] for e in events if e.get("nodeInfo", {}).get("path")]
    assert "email_review@1/draft_email@2" in paths
    assert events[-1]["content"]["parts"][0]["text"] == "Draft approved and sent successfully."
