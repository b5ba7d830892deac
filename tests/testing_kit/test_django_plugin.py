"""reviewconsole.testing.django: console_workflow runs a workflow through session_start, the ORM
store and the inbox's interrupt_decide."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest
from django.core.exceptions import PermissionDenied

from engine import WorkflowDataError
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import DecisionError
from reviewconsole.testing.django import REVIEWER, ConsoleRun

COMPLAINT = {"complaint": "My phone battery drains too fast"}
SENT = "Draft approved and sent successfully."  # the email review's end messages
REJECTED = "Draft rejected."


def test_the_plugin_is_registered_for_pytest():
    assert "reviewconsole.testing.django" in {e.value for e in entry_points(group="pytest11")}


def test_a_session_is_decided_through_the_inbox(console_workflow):
    run = console_workflow("email-review", COMPLAINT)
    assert isinstance(run, ConsoleRun)
    run.assert_waiting(kind="input", count=1)
    assert run.session.user_id == "test"
    assert run.pending[0].queue.slug == "support"
    run.decide("revise", text="shorter")
    assert run.state["feedback"] == "shorter" and "shorter" not in run.state["draft"]
    run.decide("approve")
    run.assert_outcome("completed", message=SENT)
    run.assert_route("draft_email", "draft_email", "send_email", exact=False)
    assert run.route[0] == "process_input"
    decisions = AuditEntry.objects.filter(action="interrupt.decide", actor_user__username=REVIEWER)
    assert decisions.count() == 2


def test_a_form_answer_is_validated_by_the_inbox(console_workflow):
    run = console_workflow("incident-triage", {"title": "Checkout down"})
    with pytest.raises(DecisionError):
        run.decide("answer", form={"f.severity": '"high"'})
    run.refresh().assert_waiting(count=1)
    form = {
        "f.severity": '"high"',
        "f.summary": "Checkout returns 502 errors.",
        "f.affected_customers": "120",
        "f.contact.name": "Ada",
    }
    run.decide("answer", form=form)
    run.assert_route("record_incident", "ask_triage", "route_triage", "page_on_call")
    run.assert_outcome("completed")


def test_another_decider_must_be_a_reviewer_of_the_queue(console_workflow, django_user_model):
    run = console_workflow("email-review", COMPLAINT)
    with pytest.raises(PermissionDenied):
        run.decide("approve", user=django_user_model.objects.create_user("nobody"))
    run.refresh().assert_waiting(count=1)


def test_input_that_does_not_fit_is_refused_and_nothing_is_stored(console_workflow):
    from reviewconsole.workflow_sessions.models import WorkflowSession

    with pytest.raises(WorkflowDataError):
        console_workflow("email-review", {"complaint": ""})
    assert not WorkflowSession.objects.exists()


def test_an_item_is_chosen_by_kind_or_refused_when_none_matches(console_workflow):
    run = console_workflow("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "Broken"})
    assert run.item(kind="long_running").kind == "long_running"
    with pytest.raises(LookupError, match="0 pending items match"):
        run.item(kind="confirmation")
