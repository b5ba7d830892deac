"""``GET /api/v1/interrupts`` and the HITL scenarios at the API: H5, H9 and H18."""

from __future__ import annotations

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event, WorkflowSession
from tests.api.conftest import REFUND, auth, make_api_client, post
from tests.conftest import COMPLAINT
from tests.inbox.factories import session_interrupts


def _start(client, token, workflow, data, on_commit):
    with on_commit():
        response = post(client, "/api/v1/sessions", {"workflow": workflow, "input": data}, token)
    assert response.status_code == 202, response.content
    return WorkflowSession.objects.get(pk=response.json()["session_id"])


def test_it_lists_pending_interrupts_filtered(client, token, on_commit):
    refund = _start(client, token, "refund-approval", REFUND, on_commit)
    review = _start(client, token, "email-review", {"complaint": COMPLAINT}, on_commit)
    body = client.get("/api/v1/interrupts", headers=auth(token)).json()
    assert body["count"] == 2
    assert {i["session_id"] for i in body["interrupts"]} == {refund.id, review.id}
    only = client.get("/api/v1/interrupts?workflow=refund-approval", headers=auth(token)).json()
    assert [i["session_id"] for i in only["interrupts"]] == [refund.id]
    by_queue = client.get("/api/v1/interrupts?queue=support", headers=auth(token)).json()
    assert [i["session_id"] for i in by_queue["interrupts"]] == [review.id]
    assert client.get("/api/v1/interrupts?status=resolved", headers=auth(token)).json()["count"] == 0


def test_it_lists_only_the_tokens_workflows(client, token, on_commit):
    _start(client, token, "refund-approval", REFUND, on_commit)
    _, narrow = make_api_client("narrow", workflows=["email-review"])
    assert client.get("/api/v1/interrupts", headers=auth(narrow)).json()["count"] == 0


def test_it_refuses_bad_filters(client, token):
    for query in ("status=nope", "limit=0", "limit=100000", "offset=-1"):
        response = client.get(f"/api/v1/interrupts?{query}", headers=auth(token))
        assert response.status_code == 400, query
        assert response.json()["error"]["code"] == "invalid_request"


def _two_pending(session):
    """Make a second pending interrupt on ``session`` (as a fan-out would)."""
    first = Item.objects.get(session=session, status="pending")
    second = Item(
        session=session,
        interrupt_id="second-" + first.interrupt_id,
        kind=first.kind,
        function_name=first.function_name,
        node_path=first.node_path,
        queue=first.queue,
        message="another question",
    )
    session_interrupts([second])
    second.save()
    return first, second


def test_h5_a_resume_naming_no_interrupt_while_two_are_pending(client, token, on_commit):
    session = _start(client, token, "email-review", {"complaint": COMPLAINT}, on_commit)
    first, second = _two_pending(session)
    events, answers = Event.objects.count(), Answer.objects.count()
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": {"result": "approve"}}, token)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "interrupt_ambiguous"
    assert sorted(error["pending"]) == sorted([first.interrupt_id, second.interrupt_id])
    assert (Event.objects.count(), Answer.objects.count()) == (events, answers)
    assert set(Item.objects.filter(session=session).values_list("status", flat=True)) == {"pending"}


def test_h9_a_workflow_that_can_no_longer_resume(client, token, on_commit):
    session = _start(client, token, "email-review", {"complaint": COMPLAINT}, on_commit)
    WorkflowSession.objects.filter(pk=session.pk).update(workflow="retired-workflow")
    _, scoped_all = make_api_client("all")
    events = Event.objects.count()
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": {"result": "approve"}}, scoped_all)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "workflow_unavailable"
    assert Event.objects.count() == events
    assert Item.objects.get(session=session).status == "pending"


def test_h18_a_key_is_still_a_duplicate_after_the_session_is_reset(client, token, on_commit):
    session = _start(client, token, "email-review", {"complaint": COMPLAINT}, on_commit)
    body = {"payload": {"result": "shorter"}}
    with on_commit():
        first = post(client, f"/api/v1/sessions/{session.id}/resume", body, token, "h18")
    assert first.status_code == 202
    # Reset the session to its first checkpoint, as an operator replaying it would.
    checkpoint = session.checkpoints.order_by("created_at").first()
    WorkflowSession.objects.filter(pk=session.pk).update(checkpoint=checkpoint.data, checkpoint_id=checkpoint.pk)
    events = Event.objects.filter(session=session).count()
    with on_commit():
        again = post(client, f"/api/v1/sessions/{session.id}/resume", body, token, "h18")
    assert again.status_code == 202
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Event.objects.filter(session=session).count() == events
