"""Claims: claim, renew, release, take over, reassign; who may decide a claimed item (H22)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from engine import AlreadyDecidedError
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import ClaimConflictError, DecisionError, MovedError
from reviewconsole.inbox.items.claims import interrupt_claim, interrupt_reassign, interrupt_take_over, interrupt_unclaim
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item, Queue, QueueChange
from reviewconsole.workflow_sessions.models import Answer


@pytest.fixture
def item(start_review, personas):
    """A pending email review in ``support``, with every persona created."""
    return start_review()[1]


def _audits(item, action):
    return list(AuditEntry.objects.filter(action=action, target_id=str(item.pk)).order_by("id"))


def _events(item):
    return list(QueueChange.objects.filter(item=item).order_by("id").values_list("event", flat=True))


def test_it_claims_for_the_queues_claim_time(item, personas):
    claimed = interrupt_claim(interrupt=item, user=personas.reviewer)
    assert (claimed.claimed_by, claimed.claim_holder()) == (personas.reviewer, personas.reviewer.pk)
    ttl = claimed.claim_expires_at - claimed.claimed_at
    assert ttl == dt.timedelta(seconds=1800)
    [audit] = _audits(item, "interrupt.claim")
    assert (audit.actor, audit.after["claimed_by"]) == ("user:p-reviewer", "p-reviewer")
    assert _events(item) == ["interrupt.created", "interrupt.claimed"]


def test_a_queue_may_set_its_own_claim_time(item, personas):
    Queue.objects.filter(pk=item.queue_id).update(claim_ttl_seconds=60)
    item.refresh_from_db()
    claimed = interrupt_claim(interrupt=item, user=personas.reviewer)
    assert claimed.claim_expires_at - claimed.claimed_at == dt.timedelta(seconds=60)


def test_claiming_again_renews_ones_own_claim(item, personas):
    first = interrupt_claim(interrupt=item, user=personas.reviewer)
    second = interrupt_claim(interrupt=first, user=personas.reviewer)
    assert second.claim_expires_at >= first.claim_expires_at
    assert len(_audits(item, "interrupt.claim")) == 2


def test_a_second_claimer_gets_409_naming_the_owner_and_when(item, personas):
    """H22, first half: B claims an item A holds."""
    held = interrupt_claim(interrupt=item, user=personas.reviewer)
    with pytest.raises(ClaimConflictError) as caught:
        interrupt_claim(interrupt=Item.objects.get(pk=item.pk), user=personas.queue_manager)
    when = held.claimed_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert caught.value.message.startswith(f"This request is claimed by p-reviewer at {when} UTC (until ")
    assert caught.value.details["claimed_by"] == "p-reviewer"
    item.refresh_from_db()
    assert item.claimed_by == personas.reviewer


def test_a_claim_raced_by_a_stale_page_loses_cleanly(item, personas):
    stale = Item.objects.get(pk=item.pk)  # loaded before the other claim
    interrupt_claim(interrupt=item, user=personas.reviewer)
    with pytest.raises(ClaimConflictError):
        interrupt_claim(interrupt=stale, user=personas.queue_manager)
    assert Item.objects.get(pk=item.pk).claimed_by == personas.reviewer


def test_an_expired_claim_counts_as_none(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    Item.objects.filter(pk=item.pk).update(claim_expires_at=timezone.now() - dt.timedelta(seconds=1))
    item.refresh_from_db()
    assert item.claim_holder() is None
    claimed = interrupt_claim(interrupt=item, user=personas.queue_manager)
    assert claimed.claimed_by == personas.queue_manager


def test_only_reviewers_of_the_queue_may_claim(item, personas):
    for user in (personas.other_reviewer, personas.auditor):
        with pytest.raises(PermissionDenied):
            interrupt_claim(interrupt=item, user=user)
    assert Item.objects.get(pk=item.pk).claimed_by is None


def test_a_decided_item_takes_no_claim(item, personas, on_commit):
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve")
    with pytest.raises(AlreadyDecidedError) as caught:
        interrupt_claim(interrupt=Item.objects.get(pk=item.pk), user=personas.queue_manager)
    assert "already approved by p-reviewer" in caught.value.message


def test_the_owner_releases_and_a_manager_releases_anyones(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    released = interrupt_unclaim(interrupt=Item.objects.get(pk=item.pk), user=personas.reviewer)
    assert released.claimed_by is None
    interrupt_claim(interrupt=released, user=personas.reviewer)
    by_manager = interrupt_unclaim(interrupt=Item.objects.get(pk=item.pk), user=personas.queue_manager)
    assert by_manager.claimed_by is None
    assert [a.actor for a in _audits(item, "interrupt.unclaim")] == ["user:p-reviewer", "user:p-manager"]
    assert _events(item).count("interrupt.unclaimed") == 2


def test_a_reviewer_cannot_release_someone_elses_claim(item, personas):
    manager_item = interrupt_claim(interrupt=item, user=personas.queue_manager)
    other = personas.reviewer
    with pytest.raises(ClaimConflictError):
        interrupt_unclaim(interrupt=manager_item, user=other)
    assert Item.objects.get(pk=item.pk).claimed_by == personas.queue_manager


def test_releasing_no_claim_is_a_no_op(item, personas):
    assert interrupt_unclaim(interrupt=item, user=personas.reviewer).claimed_by is None
    assert _audits(item, "interrupt.unclaim") == []


def test_a_manager_takes_over_and_it_is_audited(item, personas):
    """H22, second half: the take-over succeeds, is audited, and everyone sees the new owner."""
    interrupt_claim(interrupt=item, user=personas.reviewer)
    taken = interrupt_take_over(interrupt=Item.objects.get(pk=item.pk), user=personas.queue_manager)
    assert taken.claimed_by == personas.queue_manager
    [audit] = _audits(item, "interrupt.take_over")
    assert (audit.before, audit.after["claimed_by"]) == ({"claimed_by": "p-reviewer"}, "p-manager")
    change = QueueChange.objects.filter(item=item).latest("version")
    assert (change.event, change.version) == ("interrupt.claimed", Queue.objects.get(pk=item.queue_id).version)


def test_a_take_over_on_a_claim_that_changed_hands_is_refused(item, personas):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    seen = Item.objects.select_related("claimed_by").get(pk=item.pk)  # the manager's page: held by reviewer
    Item.objects.filter(pk=item.pk).update(claimed_by=personas.admin)  # meanwhile the claim moved
    with pytest.raises(ClaimConflictError):
        interrupt_take_over(interrupt=seen, user=personas.queue_manager)
    assert Item.objects.get(pk=item.pk).claimed_by == personas.admin


def test_only_a_manager_takes_over(item, personas):
    interrupt_claim(interrupt=item, user=personas.queue_manager)
    with pytest.raises(PermissionDenied):
        interrupt_take_over(interrupt=Item.objects.get(pk=item.pk), user=personas.reviewer)


def test_a_claimed_item_is_decided_only_by_its_owner_or_a_manager(item, personas, on_commit):
    interrupt_claim(interrupt=item, user=personas.reviewer)
    held = Item.objects.get(pk=item.pk)
    other = personas.admin.__class__.objects.create_user("p-second", password="x")
    other.groups.add(held.queue.group)
    with pytest.raises(ClaimConflictError) as caught:
        interrupt_decide(interrupt=held, user=other, action="approve")
    assert "claimed by p-reviewer" in caught.value.message
    assert Answer.objects.count() == 0
    with on_commit():
        decided = interrupt_decide(interrupt=held, user=personas.queue_manager, action="approve")
    decided.refresh_from_db()  # the outbox relay resolved the item when the decision committed
    assert (decided.status, decided.decided_by_label) == ("resolved", "p-manager")


def test_the_database_guard_refuses_a_decision_against_a_fresh_claim(item, personas):
    """The claim lands between the decider's page check and its UPDATE: the UPDATE refuses."""
    stale = Item.objects.get(pk=item.pk)  # unclaimed when the decider loaded it
    interrupt_claim(interrupt=item, user=personas.queue_manager)
    second = personas.admin.__class__.objects.create_user("p-third", password="x")
    second.groups.add(stale.queue.group)
    stale.claimed_by_id = None  # what the decider's page still believes
    with pytest.raises(ClaimConflictError):
        interrupt_decide(interrupt=stale, user=second, action="approve")
    assert Item.objects.get(pk=item.pk).status == "pending"
    assert Answer.objects.count() == 0


@pytest.fixture
def moved_after_check(monkeypatch, personas):
    """The race of a decision and a move, in order: the decider's permission check passes, then
    a manager moves the item to ``finance`` (the reviewer is not in it), then the decision's
    conditional UPDATE runs."""
    from reviewconsole.inbox.items import decisions as services

    check = services._check_may_decide

    def check_then_move(interrupt, user):
        override = check(interrupt, user)
        finance = Queue.objects.get(slug="finance")
        interrupt_reassign(interrupt=Item.objects.get(pk=interrupt.pk), user=personas.admin, to_queue=finance)
        return override

    monkeypatch.setattr(services, "_check_may_decide", check_then_move)


@pytest.mark.parametrize("decider", ["reviewer", "queue_manager"])
def test_a_decision_loses_to_a_move_after_its_permission_check(item, personas, moved_after_check, decider):
    """The reviewer (or the support manager, who overrides claims) checked membership of
    ``support``; the UPDATE also requires ``support``, so the move wins and nothing is stored."""
    with pytest.raises(MovedError) as caught:
        interrupt_decide(interrupt=item, user=getattr(personas, decider), action="approve")
    assert caught.value.message == "This request was moved to another queue; nothing was recorded."
    row = Item.objects.get(pk=item.pk)
    assert (row.status, row.queue.slug, row.decided_by_id) == ("pending", "finance", None)
    assert Answer.objects.count() == 0
    assert _audits(item, "interrupt.decide") == []


def test_the_decide_page_answers_409_moved_when_a_move_wins(client, item, personas, moved_after_check):
    client.force_login(personas.reviewer)
    url = f"/inbox/items/{item.pk}/decide/"
    response = client.post(url, {"action": "approve"}, headers={"Accept": "application/json"})
    assert response.status_code == 409
    assert response.json() == {
        "error": {"code": "moved", "message": "This request was moved to another queue; nothing was recorded."}
    }
    assert Item.objects.get(pk=item.pk).status == "pending"


def test_the_decide_form_goes_back_to_the_inbox_when_a_move_wins(client, item, personas, moved_after_check):
    """The page of an item now in a queue the reviewer is not in is not shown again."""
    client.force_login(personas.reviewer)
    response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}, follow=True)
    assert response.redirect_chain == [("/inbox/", 302)]
    assert "This request was moved to another queue; nothing was recorded." in response.content.decode()
    assert Item.objects.get(pk=item.pk).status == "pending"


def test_a_manager_reassigns_to_a_reviewer_or_a_queue(item, personas):
    given = interrupt_reassign(interrupt=item, user=personas.queue_manager, to_user=personas.reviewer)
    assert given.claimed_by == personas.reviewer
    finance = Queue.objects.get(slug="finance")
    moved = interrupt_reassign(interrupt=given, user=personas.queue_manager, to_queue=finance)
    assert (moved.queue, moved.claimed_by) == (finance, None)
    audits = _audits(item, "interrupt.reassign")
    assert [a.after for a in audits] == [{"claimed_by": "p-reviewer"}, {"queue": "finance"}]
    assert QueueChange.objects.filter(queue=finance, item=item, event="interrupt.created").exists()
    assert QueueChange.objects.filter(queue__slug="support", item=item, event="interrupt.reassigned").exists()


def test_reassigning_needs_a_reviewer_of_the_queue(item, personas):
    with pytest.raises(DecisionError):
        interrupt_reassign(interrupt=item, user=personas.queue_manager, to_user=personas.other_reviewer)
    with pytest.raises(DecisionError):
        interrupt_reassign(interrupt=item, user=personas.queue_manager)
    with pytest.raises(PermissionDenied):
        interrupt_reassign(interrupt=item, user=personas.reviewer, to_user=personas.reviewer)


@pytest.mark.parametrize("action", ["claim", "take_over"])
def test_a_claim_loses_to_a_move_after_the_page_was_loaded(item, personas, action):
    """The reviewer (or the support manager) loaded the item in ``support``; a manager moved it to
    ``finance`` meanwhile. The claim's UPDATE requires ``support``: refused as moved, nobody holds it."""
    seen = Item.objects.get(pk=item.pk)
    interrupt_reassign(
        interrupt=Item.objects.get(pk=item.pk), user=personas.admin, to_queue=Queue.objects.get(slug="finance")
    )
    claim = interrupt_claim if action == "claim" else interrupt_take_over
    user = personas.reviewer if action == "claim" else personas.queue_manager

    with pytest.raises(MovedError):
        claim(interrupt=seen, user=user)

    row = Item.objects.get(pk=item.pk)
    assert (row.queue.slug, row.claimed_by_id) == ("finance", None)
