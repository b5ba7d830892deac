"""``/api/v1/reviews``: ask (each check), read, cancel, revise; decided in the inbox and through the API."""

from __future__ import annotations

import pytest

from reviewconsole.api.models import Review
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.api.conftest import auth, make_api_client, post

ASK = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", "payload": {"amount": 250}}
TRIAGE = {
    "type": "object",
    "properties": {"severity": {"type": "string", "enum": ["low", "high"]}, "note": {"type": "string"}},
    "required": ["severity"],
}


@pytest.fixture
def ask(client, token, on_commit):
    """POST a review (``ASK`` updated with ``changes``) and run its session to the question."""

    def go(key=None, token=token, **changes):
        with on_commit():
            return post(client, "/api/v1/reviews", {**ASK, **changes}, token, key)

    return go


def item_of(body):
    return Item.objects.select_related("session", "queue").get(session_id=body["session_id"], status="pending")


def test_a_review_is_asked_in_its_queue_and_read_back(client, token, ask):
    response = ask("ask-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["id"].startswith("rv_")
    assert (body["status"], body["kind"], body["queue"], body["decision"]) == ("pending", "confirm", "finance", None)
    assert body["url"] == f"http://testserver/api/v1/reviews/{body['id']}"
    item = item_of(body)
    assert (item.queue.slug, item.interrupt_id, item.message, item.payload) == (
        "finance",
        body["id"],
        ASK["message"],
        ASK["payload"],
    )
    assert item.metadata["kind"] == "review_confirm"
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["inbox_url"] == f"http://testserver/inbox/items/{item.pk}/"
    assert read["status"] == "pending"
    assert AuditEntry.objects.filter(action="review.ask", actor="client:partner").exists()


def test_a_reviewer_decides_and_the_answer_is_the_sessions_output(client, token, ask, manager, on_commit):
    body = ask().json()
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="reject", reason="Too much")
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["status"] == "decided"
    decision = read["decision"]
    assert (decision["action"], decision["reason"], decision["by"], decision["answer"]) == (
        "reject",
        "Too much",
        "manager",
        None,
    )
    assert decision["at"]
    session = WorkflowSession.objects.get(pk=body["session_id"])
    assert (session.status, session.output) == ("completed", "reject")


def counts():
    return Review.objects.count(), WorkflowSession.objects.count()


@pytest.mark.parametrize(
    ("changes", "status", "code"),
    [
        ({"response_schema": {"type": "nope"}}, 400, "schema_invalid"),
        ({"response_schema": {"properties": {"a": {"minLength": -1}}}}, 400, "schema_invalid"),
        ({"response_schema": ["not", "an", "object"]}, 400, "schema_invalid"),
        ({"kind": "form"}, 400, "schema_invalid"),
        ({"response_schema": {"properties": {"a": {"$ref": "https://example.com/s.json"}}}}, 400, "schema_invalid"),
        ({"response_schema": {"properties": {"a": {"$ref": "#/$defs/missing"}}}}, 400, "schema_invalid"),
        ({"kind": "draft", "payload": {"text": "no draft key"}}, 400, "invalid_request"),
        ({"queue": "no-such-queue"}, 400, "queue_unknown"),
        ({"title": ""}, 400, "invalid_request"),
        ({"surprise": 1}, 400, "invalid_request"),
        ({"kind": "poem"}, 400, "invalid_request"),
        ({"due_in_seconds": 0}, 400, "invalid_request"),
        ({"on_expiry": "timeout"}, 400, "invalid_request"),  # when? nothing would ever expire it
        ({"kind": "confirm", "response_schema": TRIAGE}, 400, "invalid_request"),  # only a form uses it
        ({"revision_of": "rv_nope"}, 404, "review_unknown"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(ask, changes, status, code):
    before = counts()
    response = ask(**changes)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert counts() == before


def test_a_field_error_names_the_field_from_the_bodys_root(ask):
    error = ask(on_expiry="explode", due_in_seconds=60).json()["error"]
    assert error["code"] == "invalid_request"
    assert [e["path"] for e in error["errors"]] == [["on_expiry"]]


def test_a_schema_referring_to_its_own_parts_is_accepted(ask):
    schema = {"$defs": {"level": {"enum": ["low", "high"]}}, "properties": {"a": {"$ref": "#/$defs/level"}}}
    assert ask(response_schema=schema).status_code == 201


def test_an_invalid_schema_is_named(ask):
    error = ask(response_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": "x"}}}).json()
    assert error["error"]["code"] == "schema_invalid"
    assert "properties/n/minimum" in error["error"]["message"]
    assert error["error"]["errors"][0]["path"] == ["properties", "n", "minimum"]


def test_a_queue_outside_the_tokens_scope_is_403_whether_it_exists_or_not(client, demo, on_commit):
    scoped, token = make_api_client("support-bot")
    scoped.queues = ["support"]
    scoped.save()
    before = counts()
    for queue in ("finance", "no-such-queue"):
        response = post(client, "/api/v1/reviews", {**ASK, "queue": queue}, token)
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "queue_forbidden"
    assert counts() == before
    with on_commit():
        assert post(client, "/api/v1/reviews", {**ASK, "queue": "support"}, token).status_code == 201


def test_a_callback_must_be_https_to_a_public_address(ask, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "OUTBOUND_ALLOW_PRIVATE": False}
    before = counts()
    for url in ("http://example.com/hook", "https://127.0.0.1/hook"):
        response = ask(callback_url=url)
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "callback_invalid"
    assert counts() == before


def test_the_same_idempotency_key_answers_the_first_review_again(client, token, ask):
    first = ask("same")
    again = ask("same")
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert Review.objects.count() == 1
    other = ask("same", title="Another")
    assert (other.status_code, other.json()["error"]["code"]) == (422, "idempotency_key_reused")


def test_another_clients_review_is_not_found(client, ask, demo):
    body = ask().json()
    _, other = make_api_client("other")
    for response in (
        client.get(f"/api/v1/reviews/{body['id']}", headers=auth(other)),
        post(client, f"/api/v1/reviews/{body['id']}/cancel", {}, other),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "review_unknown"


@pytest.mark.parametrize(
    "wait",
    ["61", "60.5", "-1", "-0", "+5", "nan", "inf", "1e3", "1e1", "0x10", "5.", ".5", " 5", "5 ", "", "five", "٥"],
)
def test_a_wait_that_is_not_digits_in_range_is_refused_saying_the_range(client, token, ask, wait):
    body = ask().json()
    response = client.get(f"/api/v1/reviews/{body['id']}", {"wait": wait}, headers=auth(token))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "wait_invalid"
    assert error["message"].startswith("wait must be a number of seconds from 0 to 60,")


@pytest.mark.parametrize("wait", ["0", "0.05", "00.050"])
def test_a_wait_in_digits_is_taken(client, token, ask, wait):
    body = ask().json()
    response = client.get(f"/api/v1/reviews/{body['id']}", {"wait": wait}, headers=auth(token))
    assert (response.status_code, response.json()["status"]) == (200, "pending")


def test_a_wait_on_a_pending_review_answers_pending_when_it_elapses(client, token, ask):
    body = ask().json()
    response = client.get(f"/api/v1/reviews/{body['id']}?wait=0.05", headers=auth(token))
    assert response.status_code == 200
    assert response.json()["status"] == "pending"


def test_a_wait_on_a_decided_review_answers_at_once(client, token, ask, manager, on_commit):
    body = ask().json()
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
    response = client.get(f"/api/v1/reviews/{body['id']}?wait=60", headers=auth(token))
    assert response.json()["decision"]["action"] == "approve"


def test_a_cancelled_review_leaves_the_inbox_and_a_second_cancel_names_who_and_when(client, token, ask, on_commit):
    body = ask().json()
    item = item_of(body)
    with on_commit():
        response = post(client, f"/api/v1/reviews/{body['id']}/cancel", {"reason": "Not needed"}, token, "c-1")
    assert response.status_code == 200, response.content
    cancelled = response.json()
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancelled"]["by"] == "client:partner"
    assert cancelled["cancelled"]["reason"] == "Not needed"
    item.refresh_from_db()
    assert item.status == "cancelled"
    again = post(client, f"/api/v1/reviews/{body['id']}/cancel", {}, token, "c-2")
    assert again.status_code == 409
    error = again.json()["error"]
    assert (error["code"], error["by"], error["at"]) == (
        "review_cancelled",
        "client:partner",
        cancelled["cancelled"]["at"],
    )
    assert AuditEntry.objects.filter(action="review.cancel").count() == 1


def test_cancelling_a_decided_review_names_the_decider(client, token, ask, manager, on_commit):
    body = ask().json()
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
    response = post(client, f"/api/v1/reviews/{body['id']}/cancel", {}, token)
    assert response.status_code == 409
    error = response.json()["error"]
    assert (error["code"], error["by"]) == ("review_decided", "manager")
    assert error["at"] and "manager" in error["message"]


def test_a_form_review_takes_only_an_answer_that_fits_in_every_door(client, token, ask, manager, on_commit):
    from reviewconsole.inbox.errors import DecisionError

    body = ask(response_schema=TRIAGE).json()
    assert body["kind"] == "form"
    item = item_of(body)
    with pytest.raises(DecisionError) as refused:
        interrupt_decide(interrupt=item, user=manager, action="answer", form={"f.severity": '"medium"'})
    assert refused.value.errors
    api = post(client, f"/api/v1/sessions/{body['session_id']}/resume", {"payload": {"severity": "medium"}}, token)
    assert api.status_code == 400
    assert api.json()["error"]["code"] == "answer_invalid"
    assert api.json()["error"]["errors"]
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="answer", form={"f.severity": '"high"', "f.note": "x"})
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["decision"]["action"] == "answer"
    assert read["decision"]["answer"] == {"severity": "high", "note": "x"}
    assert WorkflowSession.objects.get(pk=body["session_id"]).output == {"severity": "high", "note": "x"}


def test_a_draft_edited_before_approval_is_the_answer_with_its_edits(client, token, ask, manager, on_commit):
    body = ask(kind="draft", payload={"draft": "Hello,\nyour refund is on its way.\n"}).json()
    item = item_of(body)
    assert item.metadata["kind"] == "review_draft"
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="approve", draft="Hello,\nyour refund is sent.")
    decision = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()["decision"]
    assert (decision["action"], decision["answer"]) == ("approve", "Hello,\nyour refund is sent.")
    assert decision["edits"]["draft"] == "Hello,\nyour refund is sent."
    assert "+your refund is sent." in decision["edits"]["diff"]


def test_free_text_feedback_is_the_decisions_feedback(client, token, ask, manager, on_commit):
    body = ask(kind="text").json()
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="revise", text="Ask for the order number")
    decision = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()["decision"]
    assert (decision["action"], decision["feedback"]) == ("revise", "Ask for the order number")
    assert decision["answer"] is None


def test_a_revision_supersedes_the_pending_review(client, token, ask):
    older = ask(kind="draft", payload={"draft": "one\ntwo\n"}).json()
    old_item = item_of(older)
    newer = ask(kind="draft", payload={"draft": "one\nthree\n"}, revision_of=older["id"]).json()
    assert newer["revision_of"] == older["id"]
    read = client.get(f"/api/v1/reviews/{older['id']}", headers=auth(token)).json()
    assert (read["status"], read["superseded_by"]) == ("superseded", newer["id"])
    old_item.refresh_from_db()
    assert old_item.display_status == "superseded"
    assert item_of(newer).metadata["supersedes_session"] == older["session_id"]
    again = ask(revision_of=older["id"])
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "review_superseded"
    assert again.json()["error"]["superseded_by"] == newer["id"]


def test_a_revision_of_a_decided_review_keeps_its_decision(client, token, ask, manager, on_commit):
    older = ask(kind="text").json()
    with on_commit():
        interrupt_decide(interrupt=item_of(older), user=manager, action="revise", text="Shorter")
    newer = ask(kind="text", revision_of=older["id"])
    assert newer.status_code == 201
    read = client.get(f"/api/v1/reviews/{older['id']}", headers=auth(token)).json()
    assert (read["status"], read["decision"]["feedback"], read["superseded_by"]) == (
        "decided",
        "Shorter",
        newer.json()["id"],
    )


def test_a_review_that_times_out_is_expired(client, token, ask, on_commit):
    import datetime as dt

    from django.utils import timezone

    from reviewconsole.inbox.items.expiry import interrupt_expire

    body = ask(due_in_seconds=60, on_expiry="timeout").json()
    assert body["due_at"]
    with on_commit():
        assert interrupt_expire(pk=item_of(body).pk, now=timezone.now() + dt.timedelta(seconds=61)) == "timed_out"
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["status"] == "expired"
    assert read["decision"]["action"] == "timeout"


def test_the_review_workflow_is_not_started_through_the_sessions_api(client, token):
    response = post(client, "/api/v1/sessions", {"workflow": "review", "input": {}}, token)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "workflow_unknown"


def test_the_review_workflow_is_not_an_agui_workflow(client, token):
    body = {"threadId": "t-1", "runId": "r-1", "messages": [], "state": {}}
    response = client.post("/agui/review/", body, content_type="application/json", headers=auth(token))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_workflow"


def cancel_in_inbox(body, manager, on_commit, *, whole_session=False):
    from reviewconsole.inbox.items.lifecycle import Actor, interrupt_cancel

    with on_commit():
        interrupt_cancel(
            interrupt=item_of(body), actor=Actor.person(manager), reason="Duplicate", whole_session=whole_session
        )


@pytest.mark.parametrize("whole_session", [False, True])
def test_a_review_a_manager_cancels_in_the_inbox_is_cancelled_by_them(
    client, token, ask, manager, on_commit, whole_session
):
    # It said "decided" with the action "cancelled" (the request), or "cancelled by system" without
    # the reason (the whole session).
    body = ask().json()
    cancel_in_inbox(body, manager, on_commit, whole_session=whole_session)
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert (read["status"], read["decision"]) == ("cancelled", None)
    assert (read["cancelled"]["by"], read["cancelled"]["reason"]) == ("manager", "Duplicate")
    assert read["cancelled"]["at"]
    again = post(client, f"/api/v1/reviews/{body['id']}/cancel", {}, token)
    assert again.status_code == 409
    error = again.json()["error"]
    assert (error["code"], error["by"], error["at"]) == ("review_cancelled", "manager", read["cancelled"]["at"])


def test_a_review_its_client_cancelled_stays_cancelled_when_revised(client, token, ask, on_commit):
    older = ask().json()
    with on_commit():
        assert post(client, f"/api/v1/reviews/{older['id']}/cancel", {}, token).status_code == 200
    newer = ask(revision_of=older["id"]).json()
    read = client.get(f"/api/v1/reviews/{older['id']}", headers=auth(token)).json()
    assert (read["status"], read["superseded_by"], read["cancelled"]["by"]) == (
        "cancelled",
        newer["id"],
        "client:partner",
    )


def test_another_client_neither_sees_nor_answers_a_review_through_the_sessions_api(client, token, ask, on_commit):
    # The review 404s for another client, but its session was readable, listed and answerable there.
    body = ask().json()
    _, other = make_api_client("other")
    session = f"/api/v1/sessions/{body['session_id']}"
    assert client.get(session, headers=auth(other)).status_code == 404
    assert client.get("/api/v1/interrupts", headers=auth(other)).json()["interrupts"] == []
    for path, answer in ((f"{session}/resume", {"payload": "yes"}), (f"{session}/cancel", {})):
        refused = post(client, path, answer, other)
        assert (refused.status_code, refused.json()["error"]["code"]) == (404, "session_not_found")
    assert client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()["status"] == "pending"
    mine = client.get("/api/v1/interrupts", headers=auth(token)).json()["interrupts"]
    assert [i["id"] for i in mine] == [body["id"]]
    with on_commit():
        answered = post(client, f"{session}/resume", {"payload": "yes"}, token)  # its own client may
    assert answered.status_code == 202, answered.content
    decision = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()["decision"]
    assert (decision["action"], decision["by"]) == ("approve", "client:partner")


def test_the_item_page_is_headed_by_the_reviews_title(client, ask, manager):
    body = ask(title="Refund <b>A-1001</b>").json()
    client.force_login(manager)
    page = client.get(f"/inbox/items/{item_of(body).pk}/").content.decode()
    assert '<h1 id="item-title">Refund &lt;b&gt;A-1001&lt;/b&gt;</h1>' in page
    assert "<title>Refund &lt;b&gt;A-1001&lt;/b&gt; · " in page


def test_confirm_reviews_are_approved_together_and_drafts_on_their_own_page(client, token, ask, manager, on_commit):
    confirms = [ask(title=f"Refund {n}").json() for n in range(2)]
    draft = ask(kind="draft", payload={"draft": "Hello"}).json()
    client.force_login(manager)
    ids = [item_of(b).pk for b in (*confirms, draft)]
    with on_commit():
        client.post("/inbox/bulk/", {"action": "approve", "ids": ids})
    for body in confirms:
        read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
        assert (read["status"], read["decision"]["action"], read["decision"]["by"]) == ("decided", "approve", "manager")
    assert client.get(f"/api/v1/reviews/{draft['id']}", headers=auth(token)).json()["status"] == "pending"


CONTACT_FORM = {
    "type": "object",
    "properties": {"email": {"type": "string", "format": "email"}, "on": {"type": "string", "format": "date"}},
    "required": ["email"],
}


def test_a_form_reviews_formats_are_checked_when_the_api_answers(client, token, ask, on_commit):
    body = ask(kind="form", response_schema=CONTACT_FORM).json()
    resume = f"/api/v1/sessions/{body['session_id']}/resume"
    refused = post(client, resume, {"payload": {"email": "dana@", "on": "31/12/2026"}}, token)
    assert refused.status_code == 400, refused.content
    error = refused.json()["error"]
    assert error["code"] == "answer_invalid"
    assert error["errors"] == [
        {"path": ["email"], "message": "not an email address, e.g. name@example.com"},
        {"path": ["on"], "message": "not a date, e.g. 2026-12-31"},
    ]
    assert item_of(body).status == "pending"  # nothing stored
    with on_commit():
        answered = post(client, resume, {"payload": {"email": "dana@example.com", "on": "2026-12-31"}}, token)
    assert answered.status_code == 202, answered.content
    read = client.get(f"/api/v1/reviews/{body['id']}", headers=auth(token)).json()
    assert read["decision"]["answer"] == {"email": "dana@example.com", "on": "2026-12-31"}
