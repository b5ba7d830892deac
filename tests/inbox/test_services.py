"""``interrupt_decide`` and ``resume_payload``: a reviewer's action becomes one stored answer."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from engine import AlreadyDecidedError
from reviewconsole.inbox.items.decisions import DecisionError, interrupt_decide, resume_payload
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event
from tests.conftest import end_message


@pytest.mark.parametrize(
    ("action", "text", "payload"),
    [
        ("approve", "", {"result": "approve"}),
        ("reject", "ignored", {"result": "reject"}),
        ("revise", "  shorter  ", {"result": "shorter"}),
    ],
)
def test_resume_payload_of_a_free_text_request(action, text, payload):
    assert resume_payload(Item(kind="input"), action, text) == payload


@pytest.mark.parametrize(("action", "confirmed"), [("approve", True), ("reject", False)])
def test_resume_payload_of_a_tool_confirmation(action, confirmed):
    assert resume_payload(Item(kind="confirmation"), action) == {"confirmed": confirmed}


@pytest.mark.parametrize(
    ("kind", "action", "text", "message"),
    [
        ("input", "delete", "", "Unknown action 'delete'."),
        ("input", "revise", " ", "Write the feedback the next draft should apply."),
        ("input", "revise", "Approve", "Use the Approve or Reject buttons for that."),
        ("confirmation", "revise", "x", "A tool call can only be approved or rejected."),
    ],
)
def test_resume_payload_refuses_incomplete_decisions(kind, action, text, message):
    with pytest.raises(DecisionError) as caught:
        resume_payload(Item(kind=kind), action, text)
    assert str(caught.value) == message


def test_a_non_member_may_not_decide(outsider, start_review, on_commit):
    _, interrupt = start_review()
    with pytest.raises(PermissionDenied), on_commit():
        interrupt_decide(interrupt=interrupt, user=outsider, action="approve")
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert Answer.objects.count() == 0


def test_three_rounds_of_feedback_then_approve(manager, start_review, on_commit):
    """H2: four drafts, four requests, the draft model called four times, one email sent."""
    session, interrupt = start_review()
    drafts = [session.state["draft"]]
    for feedback in ["shorter", "mention a refund", "more formal"]:
        with on_commit():
            interrupt_decide(interrupt=interrupt, user=manager, action="revise", text=feedback)
        session.refresh_from_db()
        assert session.state["feedback"] == feedback
        drafts.append(session.state["draft"])
        interrupt = Item.objects.get(session=session, status="pending")
    with on_commit():
        interrupt_decide(interrupt=interrupt, user=manager, action="approve")

    session.refresh_from_db()
    assert session.status == "completed"
    assert len(set(drafts)) == 4
    assert "refund you in full" in drafts[2]
    assert drafts[3].startswith("Subject: About your message: My phone battery drains too fast\n\nDear Customer,")
    assert list(Item.objects.filter(session=session).values_list("decision", flat=True)) == [
        "revise",
        "revise",
        "revise",
        "approve",
    ]
    assert Event.objects.filter(session=session, author="draft_email").count() == 4
    paths = list(Event.objects.filter(session=session).values_list("node_path", flat=True))
    assert sum(p.endswith("/send_email@1") for p in paths) == 1
    assert end_message(session) == "Draft approved and sent successfully."
    seqs = list(Event.objects.filter(session=session).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_a_late_decision_names_the_first(manager, start_review, on_commit):
    _, interrupt = start_review()
    with on_commit():
        interrupt_decide(interrupt=interrupt, user=manager, action="reject", reason="too long")
    stale = Item.objects.get(pk=interrupt.pk)
    stale.status = "pending"  # what a page loaded before the decision still holds
    with pytest.raises(AlreadyDecidedError) as caught:
        interrupt_decide(interrupt=stale, user=manager, action="approve")
    interrupt.refresh_from_db()
    assert caught.value.message.startswith("This request was already rejected by manager at ")
    assert caught.value.details["decided_by"] == "manager"
    assert caught.value.details["decided_at"] == interrupt.decided_at.isoformat()
    assert interrupt.decision == "reject"
