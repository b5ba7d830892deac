"""``/api/v1/sessions``: start, read, resume (the refund approval's long-running call) and cancel."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.demo import refund_approval
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event, WorkflowSession
from reviewconsole.workflow_sessions.models import Interrupt as SessionInterrupt
from tests.api.conftest import REFUND, auth, make_api_client, post
from tests.conftest import COMPLAINT, texts


@pytest.fixture
def refund(client, token, on_commit):
    """A refund above the limit started through the API, waiting on ``ask_for_approval``."""
    refund_approval.submitted_refunds.clear()
    with on_commit():
        response = post(client, "/api/v1/sessions", {"workflow": "refund-approval", "input": REFUND}, token, "start-1")
    assert response.status_code == 202, response.content
    return WorkflowSession.objects.get(pk=response.json()["session_id"])


def test_it_starts_a_session(client, token, refund):
    refund.refresh_from_db()
    assert refund.status == "waiting"
    assert refund.user_id == "client:partner"
    pending = Item.objects.get(session=refund, status="pending")
    assert (pending.kind, pending.function_name) == ("long_running", "ask_for_approval")
    entry = AuditEntry.objects.get(action="session.start")
    assert (entry.actor, entry.target_id) == ("client:partner", refund.id)


def test_it_reads_a_session_with_adk_events(client, token, refund):
    response = client.get(f"/api/v1/sessions/{refund.id}", headers=auth(token))
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["workflow"], body["status"]) == (refund.id, "refund-approval", "waiting")
    assert body["interrupts"][0]["function_name"] == "ask_for_approval"
    assert body["events"][0]["author"] == "user"
    assert any("longRunningToolIds" in e for e in body["events"])
    assert AuditEntry.objects.filter(action="token.use", actor="client:partner").exists()


def test_the_refund_approval_resumes_with_the_late_result(client, token, refund, on_commit):
    approval = Item.objects.get(session=refund, status="pending")
    with on_commit():
        response = post(
            client, f"/api/v1/sessions/{refund.id}/resume", {"payload": {"status": "approved"}}, token, "resume-1"
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert {k: body[k] for k in ("session_id", "answered", "status")} == {
        "session_id": refund.id,
        "answered": [approval.interrupt_id],
        "status": "queued",
    }
    assert (body["receipt"]["decision"], body["receipt"]["decided_by"]) == ("approve", "client:partner")
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by_label) == ("resolved", "client:partner")
    confirmation = Item.objects.get(session=refund, status="pending")
    assert confirmation.kind == "confirmation"
    with on_commit():
        response = post(
            client,
            f"/api/v1/sessions/{refund.id}/resume",
            {
                "interrupt_id": confirmation.interrupt_id,
                "payload": {"confirmed": True, "args_digest": confirmation.metadata["args_digest"]},
            },
            token,
            "resume-2",
        )
    assert response.status_code == 202
    refund.refresh_from_db()
    assert refund.status == "completed"
    assert refund_approval.submitted_refunds == [{"order_id": "A-1001", "amount": 250.0}]
    assert AuditEntry.objects.filter(action="interrupt.decide", actor="client:partner").count() == 2


def test_a_second_answer_gets_409_naming_the_first(client, token, refund, on_commit):
    with on_commit():
        first = post(client, f"/api/v1/sessions/{refund.id}/resume", {"payload": {"status": "approved"}}, token)
    assert first.status_code == 202
    approval = Item.objects.get(session=refund, function_name="ask_for_approval")
    events = Event.objects.filter(session=refund).count()
    response = post(
        client,
        f"/api/v1/sessions/{refund.id}/resume",
        {"interrupt_id": approval.interrupt_id, "payload": {"status": "rejected"}},
        token,
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "interrupt_decided"
    assert error["decided_by"] == "client:partner"
    assert error["decided_at"]
    assert Event.objects.filter(session=refund).count() == events


def test_an_answer_failing_the_schema_is_refused_and_nothing_stored(client, token, start_review):
    session, interrupt = start_review()
    # The email review's interrupt takes free text; a confirmation needs {"confirmed": bool}.
    SessionInterrupt.objects.filter(item=interrupt).update(response_schema={"type": "object", "required": ["x"]})
    answers = Answer.objects.count()
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": {"result": "approve"}}, token)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "answer_invalid"
    assert Answer.objects.count() == answers
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"


def test_it_cancels_a_session(client, token, refund, on_commit):
    with on_commit():
        response = post(client, f"/api/v1/sessions/{refund.id}/cancel", {"reason": "customer withdrew"}, token, "c-1")
    assert response.status_code == 200
    assert response.json() == {"session_id": refund.id, "status": "cancelled"}
    refund.refresh_from_db()
    assert refund.status == "cancelled"
    assert Item.objects.get(session=refund).status == "cancelled"
    again = post(client, f"/api/v1/sessions/{refund.id}/cancel", {}, token)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "session_closed"


def test_it_refuses_a_workflow_outside_the_tokens_scope(client, demo):
    _, narrow = make_api_client("narrow", workflows=["email-review"])
    response = post(client, "/api/v1/sessions", {"workflow": "refund-approval", "input": REFUND}, narrow)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "workflow_forbidden"
    assert WorkflowSession.objects.count() == 0


def test_a_session_outside_the_scope_is_not_found(client, demo, refund):
    _, narrow = make_api_client("narrow", workflows=["email-review"])
    assert client.get(f"/api/v1/sessions/{refund.id}", headers=auth(narrow)).status_code == 404
    response = post(client, f"/api/v1/sessions/{refund.id}/resume", {"payload": {"status": "approved"}}, narrow)
    assert response.status_code == 404
    assert Item.objects.get(session=refund).status == "pending"


@pytest.mark.parametrize(
    ("workflow", "data", "message", "errors"),
    [
        (
            "email-review",
            {"complaint": ""},
            "The input does not fit the workflow: complaint: String should have at least 1 character.",
            [{"path": ["complaint"], "message": "String should have at least 1 character"}],
        ),
        (
            "email-review",
            {},
            "The input does not fit the workflow: complaint: Field required.",
            [{"path": ["complaint"], "message": "Field required"}],
        ),
        (
            "email-review",
            ["a complaint"],
            "The input does not fit the workflow: the input should be a JSON object.",
            [{"path": [], "message": "should be a JSON object"}],
        ),
        (
            "incident-triage",
            {"title": "Checkout down", "details": {"code": 502}},
            "The input does not fit the workflow: details: Input should be a valid string.",
            [{"path": ["details"], "message": "Input should be a valid string"}],
        ),
    ],
)
def test_input_that_does_not_fit_is_refused_in_the_workflows_words(client, token, workflow, data, message, errors):
    response = post(client, "/api/v1/sessions", {"workflow": workflow, "input": data}, token)
    assert response.status_code == 400
    assert response.json() == {"error": {"code": "data_invalid", "message": message, "errors": errors}}
    for internal in ("Node", "node", "input_schema", "email_review", "incident_triage", "EmailReviewInput"):
        assert internal not in response.json()["error"]["message"]
    assert WorkflowSession.objects.count() == 0


def test_a_body_over_djangos_upload_limit_is_a_413_in_the_api_format(client, token, settings, caplog):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    data = {"workflow": "email-review", "input": {"complaint": "x" * 2000}}
    response = post(client, "/api/v1/sessions", data, token, "too-big-1")
    assert response.status_code == 413
    assert response.json() == {
        "error": {"code": "body_too_large", "message": "The body exceeds 1000 bytes.", "max_bytes": 1000}
    }
    assert WorkflowSession.objects.count() == 0
    assert "internal_error" not in caplog.text and not [r for r in caplog.records if r.levelname == "ERROR"]


def test_it_404s_an_unknown_workflow(client, token):
    response = post(client, "/api/v1/sessions", {"workflow": "nope", "input": {}}, token)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "workflow_unknown"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/nope"),
        ("get", "/api/v1/sessions/x/events/more"),
        ("post", "/api/v1/sessions/x/resum"),
        ("get", "/api/v1/"),
    ],
)
@pytest.mark.parametrize("authorized", [True, False])
def test_an_unknown_api_path_is_a_json_404_in_the_error_format(client, token, method, path, authorized):
    headers = auth(token) if authorized else {}
    response = getattr(client, method)(path, headers=headers)
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    assert response.json() == {"error": {"code": "not_found", "message": "No such API endpoint; see /api/v1/docs."}}


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer nope",
        "Basic dXNlcjpwYXNz",
        "bearer rc_" + "x" * 43,
        "Bearer " + "x" * 5000,
    ],
)
def test_it_refuses_missing_or_bad_tokens(client, demo, header):
    headers = {"Authorization": header} if header is not None else {}
    response = client.get("/api/v1/interrupts", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_revoked_token_is_refused(client, api_client, token):
    from django.utils import timezone

    ApiClient = type(api_client[0])
    ApiClient.objects.filter(pk=api_client[0].pk).update(revoked_at=timezone.now())
    assert client.get("/api/v1/interrupts", headers=auth(token)).status_code == 401


def test_it_answers_malformed_json_with_400(client, token):
    response = client.post("/api/v1/sessions", "{nope", content_type="application/json", headers=auth(token))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


def test_session_start_through_the_email_review(client, token, on_commit):
    with on_commit():
        response = post(
            client, "/api/v1/sessions", {"workflow": "email-review", "input": {"complaint": COMPLAINT}}, token
        )
    assert response.status_code == 202
    assert WorkflowSession.objects.get().state["complaint"] == COMPLAINT


EDITED = "Hello,\n\nFixed."


@pytest.mark.parametrize(
    ("answer", "email", "message"),
    [
        ("approve", lambda draft: draft, "Draft approved and sent successfully."),
        ({"result": "approve", "draft": EDITED}, lambda draft: EDITED, "Draft approved and sent successfully."),
        ("reject", lambda draft: draft, "Draft rejected."),
    ],
)
def test_a_completed_email_review_reads_with_its_result_and_the_email_in_its_state(
    client, token, on_commit, answer, email, message
):
    """ADK's request_input sample ends with a message and no output (the conformance traces pin it),
    so ``output`` stays null: ``result`` is the sentence and ``state.draft`` the email as sent."""
    with on_commit():
        started = post(
            client, "/api/v1/sessions", {"workflow": "email-review", "input": {"complaint": COMPLAINT}}, token
        )
    session_id = started.json()["session_id"]
    waiting = client.get(f"/api/v1/sessions/{session_id}", headers=auth(token)).json()
    assert (waiting["status"], waiting["output"], waiting["result"]) == ("waiting", None, None)
    with on_commit():
        response = post(client, f"/api/v1/sessions/{session_id}/resume", {"payload": answer}, token)
    assert response.status_code == 202, response.content
    body = client.get(f"/api/v1/sessions/{session_id}", headers=auth(token)).json()
    assert (body["status"], body["output"], body["result"]) == ("completed", None, message)
    assert body["state"]["draft"] == email(waiting["state"]["draft"])
    assert texts(WorkflowSession.objects.get(pk=session_id))[-1] == message
