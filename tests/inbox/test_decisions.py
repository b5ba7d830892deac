"""``interrupt_decide`` beyond the email basics: reasons, edits with diffs, generated forms,
restricted actions, and H1 (a second decision by the inbox or the API is refused)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from engine import AlreadyDecidedError
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import DecisionError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event
from reviewconsole.workflow_sessions.runners import runner_for
from tests.conftest import end_message

TRIAGE = {
    "f.severity": '"high"',
    "f.summary": "Checkout fails for card payments",
    "f.affected_customers": "120",
    "f.page_on_call": "1",
    "f.components.0": "checkout",
    "f.components.1": "payments",
    "f.contact.name": "Dana",
    "f.contact.email": "",
}


def test_a_rejection_needs_a_reason_and_keeps_it(start_review, personas, on_commit):
    session, item = start_review()
    with pytest.raises(DecisionError) as caught:
        interrupt_decide(interrupt=item, user=personas.reviewer, action="reject", reason="  ")
    assert caught.value.message == "Give a reason for the rejection."
    assert Answer.objects.count() == 0
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="reject", reason="Wrong tone")
    item.refresh_from_db()
    session.refresh_from_db()
    assert (item.decision, item.reason, item.response) == ("reject", "Wrong tone", "reject")
    assert end_message(session) == "Draft rejected."
    [audit] = AuditEntry.objects.filter(action="interrupt.decide", target_id=str(item.pk))
    assert (audit.actor, audit.detail["reason"], audit.after["decision"]) == ("user:p-reviewer", "Wrong tone", "reject")


def test_an_interrupt_may_make_the_reason_optional(start_review, personas, on_commit):
    _, item = start_review()
    Item.objects.filter(pk=item.pk).update(metadata={**item.metadata, "reject_reason_required": False})
    item.refresh_from_db()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="reject")
    item.refresh_from_db()
    assert item.decision == "reject"


def test_an_edited_draft_is_what_the_workflow_sends_and_its_diff_is_kept(start_review, personas, on_commit):
    session, item = start_review()
    original = session.state["draft"]
    edited = original.replace("Hello,", "Dear Ms Smith,") + "\nP.S. Your case number is 42."
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve", draft=edited)
    item.refresh_from_db()
    session.refresh_from_db()
    assert item.response == {"result": "approve", "draft": edited}
    assert session.state["draft"] == edited
    assert end_message(session) == "Draft approved and sent successfully."
    assert "-Hello," in item.edit_diff and "+Dear Ms Smith," in item.edit_diff
    assert "+P.S. Your case number is 42." in item.edit_diff
    audit = AuditEntry.objects.get(action="interrupt.decide", target_id=str(item.pk))
    assert audit.detail["edit_diff"] == item.edit_diff


def test_an_unchanged_draft_approves_as_plain_text(start_review, personas, on_commit):
    session, item = start_review()
    with on_commit():
        interrupt_decide(
            interrupt=item, user=personas.reviewer, action="approve", draft=session.state["draft"].replace("\n", "\r\n")
        )
    item.refresh_from_db()
    assert (item.response, item.edit_diff) == ("approve", "")


def test_a_generated_form_answer_is_validated_and_resumes_the_workflow(start_session, personas, on_commit):
    session, [item] = start_session("incident-triage", {"title": "Checkout down", "details": "500s on pay"})
    assert item.response_schema["title"] == "Triage"
    manager = personas.admin
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="answer", form=TRIAGE)
    item.refresh_from_db()
    session.refresh_from_db()
    expected = {
        "severity": "high",
        "summary": "Checkout fails for card payments",
        "affected_customers": 120,
        "page_on_call": True,
        "components": ["checkout", "payments"],
        "contact": {"name": "Dana"},
    }
    assert item.response == expected
    assert session.state["triage"] == expected
    assert end_message(session) == "Paged on call: high incident, Checkout fails for card payments"


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"f.severity": '"catastrophic"'}, ["severity"], "'catastrophic' is not one of"),
        ({"f.affected_customers": "many"}, ["affected_customers"], "Enter a whole number."),
        ({"f.affected_customers": "-3"}, ["affected_customers"], "-3 is less than the minimum of 0"),
        ({"f.summary": "no"}, ["summary"], "Write at least 5 characters."),  # not "'no' is too short"
        ({"f.contact.name": ""}, ["contact", "name"], "This field is required."),
    ],
)
def test_an_invalid_form_stores_nothing_and_says_where(start_session, personas, change, path, message):
    session, [item] = start_session("incident-triage", {"title": "Checkout down"})
    version = session.version
    with pytest.raises(DecisionError) as caught:
        interrupt_decide(interrupt=item, user=personas.admin, action="answer", form={**TRIAGE, **change})
    assert caught.value.message == "Correct the highlighted fields; nothing was recorded."
    [error] = [e for e in caught.value.errors if e["path"] == path]
    assert error["message"].startswith(message)
    item.refresh_from_db()
    session.refresh_from_db()
    assert (item.status, session.version, Answer.objects.count()) == ("pending", version, 0)


def test_a_schema_item_takes_only_the_form(start_session, personas):
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    with pytest.raises(DecisionError) as caught:
        interrupt_decide(interrupt=item, user=personas.admin, action="approve")
    assert (
        caught.value.message == "This request cannot be decided with 'approve'; it takes answer. Nothing was recorded."
    )
    assert caught.value.code == "action_not_supported"


def test_an_interrupt_may_restrict_the_actions(start_review, personas):
    _, item = start_review()
    Item.objects.filter(pk=item.pk).update(metadata={**item.metadata, "actions": ["approve", "reject"]})
    item.refresh_from_db()
    with pytest.raises(DecisionError):
        interrupt_decide(interrupt=item, user=personas.reviewer, action="revise", text="shorter")


def test_a_long_running_rejection_carries_its_reason(start_session, personas, on_commit):
    session, [item] = start_session("refund-approval", {"order_id": "o-9", "amount": 250, "reason": "broken"})
    assert (item.kind, item.function_name) == ("long_running", "ask_for_approval")
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.admin, action="reject", reason="Outside the warranty")
    item.refresh_from_db()
    session.refresh_from_db()
    assert item.response == {"status": "rejected", "reason": "Outside the warranty"}
    assert end_message(session) == "Your refund for order o-9 was not approved."


def test_h1_a_second_decision_by_the_inbox_or_the_api_is_refused(start_review, personas, on_commit):
    """H1: approve, then reject the same interrupt: 409 naming the first, nothing else changes."""
    session, item = start_review()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve")
    session.refresh_from_db()
    item.refresh_from_db()
    before = (Event.objects.filter(session=session).count(), Answer.objects.count(), session.version, session.state)
    stale = Item.objects.get(pk=item.pk)
    stale.status = "pending"
    with pytest.raises(AlreadyDecidedError) as inbox:
        interrupt_decide(interrupt=stale, user=personas.queue_manager, action="reject", reason="late")
    with pytest.raises(AlreadyDecidedError) as api:
        async_to_sync(runner_for("email-review").submit)(
            session.id, {item.interrupt_id: {"result": "reject"}}, decided_by="client:crm"
        )
    assert inbox.value.message.startswith("This request was already approved by p-reviewer at ")
    assert api.value.details["decided_by"] == "p-reviewer"
    session.refresh_from_db()
    after = (Event.objects.filter(session=session).count(), Answer.objects.count(), session.version, session.state)
    assert after == before
    responses = [
        e
        for e in Event.objects.filter(session=session).values_list("data", flat=True)
        for p in e.get("content", {}).get("parts", [])
        if p.get("functionResponse", {}).get("id") == item.interrupt_id
    ]
    assert len(responses) == 1
