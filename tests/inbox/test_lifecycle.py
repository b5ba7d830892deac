"""The review lifecycle's services: defer, return to queue, escalate, cancel (inbox/items/lifecycle.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from engine import AlreadyDecidedError
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import (
    CancelledError,
    ClaimConflictError,
    DecisionError,
    DeferredError,
    MovedError,
    NotClaimedError,
)
from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.escalation import escalation_targets
from reviewconsole.inbox.items.lifecycle import (
    Actor,
    interrupt_cancel,
    interrupt_defer,
    interrupt_escalate,
    interrupt_release,
)
from reviewconsole.inbox.models import Comment, Item, QueueChange
from reviewconsole.workflow_sessions.models import Event, WorkflowSession
from tests.conftest import end_message


@pytest.fixture
def item(start_review, personas):
    """A pending email review in ``support``, with every persona created."""
    return start_review()[1]


def _events(item):
    return list(QueueChange.objects.filter(item=item).order_by("id").values_list("queue__slug", "event"))


def _audit(item, action):
    return AuditEntry.objects.filter(action=action, target_id=str(item.pk)).order_by("-id").first()


def _later(hours=2):
    return timezone.now() + dt.timedelta(hours=hours)


def test_defer_puts_it_back_unclaimed_with_a_note_and_a_new_due_time(item, personas, on_commit):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    until = _later(3)
    with on_commit():
        deferred = interrupt_defer(
            interrupt=Item.objects.get(pk=item.pk), actor=Actor.person(personas.reviewer), until=until, note="Waiting"
        )
    assert (deferred.claimed_by, deferred.due_at, deferred.deferred_until) == (None, until, until)
    assert deferred.is_pending and deferred.display_status == "deferred"
    [note] = Comment.objects.filter(item=item)
    assert (note.kind, note.text, note.author_label) == ("defer", "Waiting", "p-reviewer")
    audit = _audit(item, "interrupt.defer")
    assert (audit.actor, audit.after["due_at"], audit.detail["note"]) == (
        "user:p-reviewer",
        until.isoformat(),
        "Waiting",
    )
    assert _events(item)[-1] == ("support", "interrupt.deferred")


def test_a_deferred_item_is_due_again_and_expires_then(item, personas):
    """The new due time is the item's: an overdue item is due again, and expiry runs at that time."""
    from reviewconsole.inbox.items.expiry import interrupt_expire

    Item.objects.filter(pk=item.pk).update(due_at=timezone.now() - dt.timedelta(minutes=1), on_expiry="")
    interrupt_expire(pk=item.pk)
    overdue = Item.objects.get(pk=item.pk)
    assert overdue.expired_at is not None
    until = _later(1)
    deferred = interrupt_defer(interrupt=overdue, actor=Actor.person(personas.reviewer), until=until, note="Later")
    assert (deferred.expired_at, deferred.is_overdue()) == (None, False)
    assert interrupt_expire(pk=item.pk) == "not_due"
    assert interrupt_expire(pk=item.pk, now=until + dt.timedelta(seconds=1)) == "marked"


@pytest.mark.parametrize(
    ("until", "note", "message"),
    [
        (lambda: timezone.now() - dt.timedelta(minutes=1), "x", "future"),
        (lambda: timezone.now() + dt.timedelta(days=91), "x", "at most 90 days"),
        (lambda: timezone.now() + dt.timedelta(hours=1), "   ", "Write a note"),
    ],
)
def test_defer_refuses_a_bad_time_or_no_note(item, personas, until, note, message):
    with pytest.raises(DecisionError, match=message):
        interrupt_defer(interrupt=item, actor=Actor.person(personas.reviewer), until=until(), note=note)
    assert Item.objects.get(pk=item.pk).deferred_until is None
    assert not Comment.objects.exists()


def test_only_the_queues_reviewers_defer_and_a_claim_is_the_owners(item, personas):
    with pytest.raises(PermissionDenied):
        interrupt_defer(interrupt=item, actor=Actor.person(personas.other_reviewer), until=_later(), note="x")
    interrupt_claim(interrupt=item, user=personas.queue_manager)
    with pytest.raises(ClaimConflictError) as caught:
        interrupt_defer(
            interrupt=Item.objects.get(pk=item.pk), actor=Actor.person(personas.reviewer), until=_later(), note="x"
        )
    assert caught.value.details["claimed_by"] == "p-manager"


def test_a_manager_defers_an_item_someone_else_claimed(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    deferred = interrupt_defer(
        interrupt=Item.objects.get(pk=item.pk), actor=Actor.person(personas.queue_manager), until=_later(), note="x"
    )
    assert deferred.claimed_by is None


def test_release_returns_a_claim_with_a_note(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    released = interrupt_release(
        interrupt=Item.objects.get(pk=item.pk),
        actor=Actor.person(personas.reviewer),
        note="Over to you: check the tone",
    )
    assert released.claimed_by is None
    assert Comment.objects.get(item=item).kind == "release"
    assert _audit(item, "interrupt.release").before == {"claimed_by": "p-reviewer"}
    assert _events(item)[-1] == ("support", "interrupt.released")
    with pytest.raises(NotClaimedError):
        interrupt_release(interrupt=released, actor=Actor.person(personas.reviewer), note="again")


def test_a_reviewer_cannot_return_someone_elses_claim(item, personas):
    interrupt_claim(interrupt=item, user=personas.queue_manager)
    with pytest.raises(ClaimConflictError):
        interrupt_release(interrupt=Item.objects.get(pk=item.pk), actor=Actor.person(personas.reviewer), note="x")
    assert Item.objects.get(pk=item.pk).claimed_by == personas.queue_manager


def test_the_allowed_escalation_queues_are_the_workflows(item):
    """email-review names support-leads (escalate_to) and triage (escalate_queues)."""
    assert [q.slug for q in escalation_targets(item)] == ["support-leads", "triage"]
    Item.objects.filter(pk=item.pk).update(metadata={**item.metadata, "escalate_queues": ["finance", "nope"]})
    assert [q.slug for q in escalation_targets(Item.objects.get(pk=item.pk))] == ["support-leads", "finance", "triage"]


def test_escalate_moves_it_to_the_workflows_queue_by_default(item, personas, on_commit):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    with on_commit():
        moved = interrupt_escalate(
            interrupt=Item.objects.get(pk=item.pk), actor=Actor.person(personas.reviewer), note="Legal"
        )
    assert (moved.queue.slug, moved.escalated_from.slug, moved.claimed_by, moved.expired_at) == (
        "support-leads",
        "support",
        None,
        None,
    )
    assert _events(item)[-2:] == [("support", "interrupt.escalated"), ("support-leads", "interrupt.created")]
    audit = _audit(item, "interrupt.escalate")
    assert (audit.actor, audit.before["queue"], audit.after["queue"]) == ("user:p-reviewer", "support", "support-leads")
    assert Comment.objects.get(item=item).kind == "escalate"


def test_escalate_to_a_picked_allowed_queue_only(item, personas):
    with pytest.raises(DecisionError) as caught:
        interrupt_escalate(interrupt=item, actor=Actor.person(personas.reviewer), note="x", to_queue="finance")
    assert caught.value.details["allowed"] == ["support-leads", "triage"]
    moved = interrupt_escalate(interrupt=item, actor=Actor.person(personas.reviewer), note="x", to_queue="triage")
    assert moved.queue.slug == "triage"


def test_a_decision_from_the_old_queue_after_an_escalation_is_moved(item, personas):
    stale = Item.objects.get(pk=item.pk)
    interrupt_escalate(interrupt=item, actor=Actor.person(personas.queue_manager), note="x")
    with pytest.raises(MovedError):
        interrupt_defer(interrupt=stale, actor=Actor.person(personas.queue_manager), until=_later(), note="x")


def test_cancel_gives_the_workflow_a_cancelled_answer_it_routes_on(item, personas, on_commit):
    with on_commit():
        cancelled = interrupt_cancel(
            interrupt=item, actor=Actor.person(personas.queue_manager), reason="Customer withdrew"
        )
    cancelled.refresh_from_db()
    session = WorkflowSession.objects.get(pk=item.session_id)
    assert (cancelled.status, cancelled.decision, cancelled.decided_by_label, cancelled.reason) == (
        "resolved",
        "cancelled",
        "p-manager",
        "Customer withdrew",
    )
    assert cancelled.response == {"cancelled": True, "reason": "Customer withdrew"}
    assert cancelled.display_status == "cancelled"
    # The engine recorded the cancel as the answer: a user function response with the interrupt's id.
    answers = [
        part["functionResponse"]
        for data in Event.objects.filter(session=session, author="user").values_list("data", flat=True)
        for part in data.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert answers == [
        {
            "id": item.interrupt_id,
            "name": "adk_request_input",
            "response": {"cancelled": True, "reason": "Customer withdrew"},
        }
    ]
    assert session.status == "completed"
    assert end_message(session) == "Draft cancelled."
    assert session.state["cancel_reason"] == "Customer withdrew"
    assert ("support", "interrupt.cancelled") in _events(item)
    assert _audit(item, "interrupt.cancel").detail["reason"] == "Customer withdrew"
    assert Comment.objects.get(item=item).kind == "cancel"


def test_only_managers_cancel(item, personas):
    with pytest.raises(PermissionDenied):
        interrupt_cancel(interrupt=item, actor=Actor.person(personas.reviewer), reason="x")
    with pytest.raises(DecisionError):
        interrupt_cancel(interrupt=item, actor=Actor.person(personas.queue_manager), reason=" ")
    assert Item.objects.get(pk=item.pk).is_pending


def test_cancel_the_whole_session(item, personas, on_commit):
    with on_commit():
        interrupt_cancel(
            interrupt=item, actor=Actor.person(personas.queue_manager), reason="Duplicate", whole_session=True
        )
    row = Item.objects.get(pk=item.pk)
    assert (row.status, row.decision, row.display_status) == ("cancelled", "cancelled", "cancelled")
    assert WorkflowSession.objects.get(pk=item.session_id).status == "cancelled"
    assert _audit(item, "session.cancel").detail["reason"] == "Duplicate"
    assert Comment.objects.get(item=item).text == "Cancelled the whole session: Duplicate"


def test_a_cancel_after_a_decision_is_a_409_naming_the_decider(item, personas, on_commit):
    stale = Item.objects.get(pk=item.pk)
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve")
    with pytest.raises(AlreadyDecidedError) as caught:
        interrupt_cancel(interrupt=stale, actor=Actor.person(personas.queue_manager), reason="x")
    assert "approved by p-reviewer" in caught.value.message
    assert not Comment.objects.exists()


def test_a_decision_after_a_cancel_is_a_409_naming_who_cancelled(item, personas, on_commit):
    stale = Item.objects.get(pk=item.pk)
    with on_commit():
        interrupt_cancel(interrupt=item, actor=Actor.person(personas.queue_manager), reason="x")
    with pytest.raises(CancelledError) as caught:
        interrupt_decide(interrupt=stale, user=personas.reviewer, action="approve")
    assert caught.value.code == "cancelled"
    assert "cancelled by p-manager" in caught.value.message
    assert caught.value.message.endswith(": x; nothing was recorded.")  # the manager's reason


def test_a_defer_after_a_decision_is_a_409_naming_the_decider(item, personas, on_commit):
    stale = Item.objects.get(pk=item.pk)
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="reject", reason="no")
    with pytest.raises(AlreadyDecidedError) as caught:
        interrupt_defer(interrupt=stale, actor=Actor.person(personas.queue_manager), until=_later(), note="x")
    assert "rejected by p-reviewer" in caught.value.message


def test_a_defer_between_loading_and_deciding_refuses_the_decision(item, personas):
    """The guard: a reviewer who loaded the item before the defer reads its note first."""
    stale = Item.objects.get(pk=item.pk)
    interrupt_defer(interrupt=item, actor=Actor.person(personas.queue_manager), until=_later(), note="Wait for legal")
    with pytest.raises(DeferredError) as caught:
        interrupt_decide(interrupt=stale, user=personas.reviewer, action="approve")
    assert "deferred by p-manager" in caught.value.message
    assert "Wait for legal" in caught.value.message
    assert Item.objects.get(pk=item.pk).is_pending


def test_a_client_acts_on_a_claimed_item_only_with_override_claims(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    held = Item.objects.get(pk=item.pk)
    with pytest.raises(ClaimConflictError):
        interrupt_defer(interrupt=held, actor=Actor.client("client:partner"), until=_later(), note="x")
    done = interrupt_defer(
        interrupt=held, actor=Actor.client("client:partner", override_claims=True), until=_later(), note="x"
    )
    assert done.claimed_by is None
    assert _audit(item, "interrupt.defer").actor == "client:partner"


def test_a_workflows_escalate_queues_get_their_queues():
    import dataclasses

    from reviewconsole.inbox.items.queues import workflow_queue_slugs
    from reviewconsole.workflows import get

    spec = dataclasses.replace(get("email-review"), escalate_queues=("legal",))
    assert "legal" in workflow_queue_slugs([spec])
    assert "legal" not in workflow_queue_slugs([get("email-review")])


def test_after_a_reviewers_escalation_the_old_queue_is_told_moved_and_expiry_keeps_the_queue(item, personas):
    from reviewconsole.inbox.items.expiry import interrupt_expire

    stale = Item.objects.get(pk=item.pk)
    moved = interrupt_escalate(interrupt=item, actor=Actor.person(personas.reviewer), note="Up")
    with pytest.raises(MovedError):
        interrupt_decide(interrupt=stale, user=personas.reviewer, action="approve")
    # Its due time passes: it would escalate to support-leads, where it already is: it stays, overdue.
    assert interrupt_expire(pk=item.pk, now=moved.due_at + dt.timedelta(seconds=1)) == "marked"
    row = Item.objects.get(pk=item.pk)
    assert (row.queue.slug, row.escalated_from.slug, row.expired_at is not None) == ("support-leads", "support", True)
