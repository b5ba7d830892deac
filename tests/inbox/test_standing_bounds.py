"""What a standing approval may cover (``policies/standing.py``), and the requester rule on every
approval (``inbox/items/policy_gate.py``): found by the last session's review of issue 15.

- A "this tool" standing approval granted on a $250 refund covered every amount up to the
  four-eyes limit, and its generated text ("Standing approval #1 granted by …") passed the refund's
  reason check above $500; the workflow's checks skipped automatic uses altogether. Now it covers
  other arguments no larger than the approved call's, never gives a reason, and goes through the
  checks (a refused use waits for a person, audited).
- A "requester's sessions" standing approval on a webhook session covered every caller of the
  webhook: the requester of a webhook session is its sender. Only a person's sessions may be covered.
- The requester rule held only on items a rule governs: the requester of a refund could approve
  its ungoverned ``submit_refund`` confirmation.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.policies.models import PolicyRule, PolicyVerdict, StandingApproval
from reviewconsole.policies.standing import StandingError, standing_grant

MID = {"order_id": "C-1", "amount": 250, "reason": "broken"}


def _grant(client, user, item, on_commit, **fields):
    client.force_login(user)
    with on_commit():
        return client.post(
            f"/inbox/items/{item.pk}/decide/",
            {"action": "approve", "standing_hours": "24", **fields},
            headers={"accept": "application/json"},
        )


def _approval(session):
    return Item.objects.filter(session=session, function_name="ask_for_approval").get()


def test_other_arguments_cover_only_amounts_no_larger_than_the_approved_call(
    start_session, personas, client, on_commit
):
    _, [first] = start_session("refund-approval", MID)
    response = _grant(client, personas.other_reviewer, first, on_commit, standing="tool", standing_scope="queue")
    assert response.status_code == 200, response.content
    standing = StandingApproval.objects.get()
    assert (standing.rule, standing.ceiling) == ("refund-approval", {"amount": 250.0})

    smaller, _ = start_session("refund-approval", {"order_id": "D-2", "amount": 180, "reason": "late"})
    used = _approval(smaller)
    assert used.decided_by_label == f"standing approval #{standing.pk} (granted by p-other)"
    assert used.reason == "", "a standing approval gives no reason on a person's behalf"
    entry = AuditEntry.objects.get(action="interrupt.decide", target_id=str(used.pk))
    assert (entry.detail["granted_by"], entry.detail["ceiling"]) == ("p-other", {"amount": 250.0})

    _, [larger] = start_session("refund-approval", {"order_id": "D-3", "amount": 400, "reason": "lost"})
    assert (larger.function_name, larger.status) == ("ask_for_approval", "pending"), "larger: a person decides"
    standing.refresh_from_db()
    assert standing.uses == 1


def test_a_standing_approval_never_passes_a_check_that_asks_a_person_for_a_reason(
    start_session, personas, client, on_commit
):
    """A $900 grant (with the reviewer's reason) does not approve the next $600 refund by itself:
    the refund's check asks a reason above $500, which only a person gives."""
    big = {"order_id": "C-9", "amount": 900, "reason": "broken"}
    _, [first] = start_session("refund-approval", big)
    response = _grant(
        client, personas.other_reviewer, first, on_commit, standing="tool", standing_scope="queue", reason="Known"
    )
    assert response.status_code == 200, response.content
    _, [waiting] = start_session("refund-approval", {**big, "amount": 600})
    assert (waiting.function_name, waiting.status) == ("ask_for_approval", "pending")
    assert StandingApproval.objects.get().uses == 0
    assert PolicyVerdict.objects.get(session_interrupt_id=waiting.session_interrupt_id).outcome == "person"
    refused = AuditEntry.objects.get(action="interrupt.decide_refused", target_id=str(waiting.pk))
    assert refused.actor.startswith("standing_approval:")
    assert (refused.detail["door"], refused.detail["reason"]) == ("standing", "")
    assert "needs a reason" in refused.detail["message"]
    _, [under] = start_session("refund-approval", {**big, "amount": 450})  # no reason needed: it decides
    assert under.function_name == "adk_request_confirmation"


def test_a_rules_automatic_decision_goes_through_the_workflows_checks(start_session):
    """An admin's rule approving every refund with no reason: above $500 the refund's check refuses
    it, and a person decides (audited with the rule as the actor)."""
    PolicyRule.objects.create(workflow="refund-approval", name="all", tool="ask_for_approval", decide="approve")
    _, [waiting] = start_session("refund-approval", {"order_id": "R-1", "amount": 700, "reason": "x"})
    assert (waiting.function_name, waiting.status) == ("ask_for_approval", "pending")
    refused = AuditEntry.objects.get(action="interrupt.decide_refused", target_id=str(waiting.pk))
    assert (refused.actor, refused.detail["door"]) == ("policy:all", "policy")
    _, [next_step] = start_session("refund-approval", {"order_id": "R-2", "amount": 300, "reason": "x"})
    assert next_step.function_name == "adk_request_confirmation", "under the check's limit the rule decides"


def test_a_standing_approval_for_a_senders_sessions_is_refused(start_session, personas, client, on_commit):
    _, [item] = start_session("refund-approval", MID, user_id="webhook:refunds")
    response = _grant(client, personas.other_reviewer, item, on_commit, standing="tool", standing_scope="user")
    assert response.status_code == 400, response.content
    assert "started by webhook:refunds, a sender rather than a person" in response.json()["error"]["message"]
    item.refresh_from_db()
    assert item.is_pending and not StandingApproval.objects.exists()
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert 'value="user"' not in page, "the page does not offer it"
    with pytest.raises(StandingError, match="a sender rather than a person"):
        standing_grant(
            workflow="refund-approval",
            tool="ask_for_approval",
            args=MID,
            exact=True,
            scope="user",
            session_id=item.session_id,
            requester="client:partner",
            queue="finance",
            granted_by=personas.other_reviewer,
            hours=1,
        )


def test_a_persons_sessions_are_covered_and_no_one_elses(start_session, personas, client, on_commit):
    _, [item] = start_session("refund-approval", MID, user_id="user:alice")
    response = _grant(client, personas.other_reviewer, item, on_commit, standing="exact", standing_scope="user")
    assert response.status_code == 200, response.content
    assert StandingApproval.objects.get().requester == "user:alice"
    alices, _ = start_session("refund-approval", MID, user_id="user:alice")
    assert _approval(alices).decided_by_label.startswith("standing approval #")
    _, [bobs] = start_session("refund-approval", MID, user_id="user:bob")
    _, [senders] = start_session("refund-approval", MID, user_id="webhook:refunds")
    assert [bobs.status, senders.status] == ["pending", "pending"]


def test_the_requester_never_approves_an_ungoverned_request_of_their_session(start_session, personas, on_commit):
    requester = f"user:{personas.other_reviewer.get_username()}"
    session, [approval] = start_session("refund-approval", MID, user_id=requester)
    with on_commit():
        interrupt_decide(interrupt=approval, user=personas.admin, action="approve")
    confirmation = Item.objects.get(session=session, status="pending")
    assert confirmation.function_name == "adk_request_confirmation"
    assert not PolicyVerdict.objects.filter(session_interrupt_id=confirmation.session_interrupt_id).exists()
    with pytest.raises(PermissionDenied, match="someone else must approve it"):
        interrupt_decide(interrupt=confirmation, user=personas.other_reviewer, action="approve")
    with on_commit():  # rejecting stays open to them
        interrupt_decide(interrupt=confirmation, user=personas.other_reviewer, action="reject", reason="Changed mind")
    confirmation.refresh_from_db()
    assert confirmation.decision == "reject"


def test_the_requester_is_refused_in_bulk_approval_too(client, personas, start_session, on_commit):
    """Bulk approval goes through the same rule: the admin's own VIP discount is refused, another's approved."""
    _, [own] = start_session("vip-discount", {"customer_id": "c123"}, user_id=f"user:{personas.admin.get_username()}")
    _, [other] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    with on_commit():
        response = client.post("/inbox/bulk/", {"action": "approve", "ids": [own.pk, other.pk]}, follow=True)
    notes = [str(m) for m in response.context["messages"]]
    assert any(n.startswith("Approved 1 item: “") for n in notes), notes
    assert any("someone else must approve it" in n for n in notes), notes
    assert Item.objects.get(pk=other.pk).decision == "approve"
    assert Item.objects.get(pk=own.pk).is_pending
