"""A decision sent again on an item already decided (``decisions.interrupt_decide``, ``receipts.is_repeat``):
the identical decision (same action, reason, edited draft, form answer) is answered 200 with the
first receipt and stores nothing; one that differs in any of them is refused 409 ``already_decided``
naming who decided what, never answered as if it were the same decision."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from tests.inbox.test_decisions import TRIAGE

JSON = {"Accept": "application/json"}


def _decide(client, item, fields):
    return client.post(f"/inbox/items/{item.pk}/decide/", fields, headers=JSON)


def _first(client, item, fields, on_commit):
    with on_commit():
        response = _decide(client, item, fields)
    assert response.status_code == 200, response.content
    return response.json()["receipt"]


def _edit(draft):
    return {"action": "approve", "edit_draft": "1", "draft": draft}


REVIEW_CASES = {
    "reject with a reason": (
        {"action": "reject", "reason": "Wrong tone"},
        {"action": "reject", "reason": "Wrong tone\r\n"},  # the same once normalised as stored
        {"action": "reject", "reason": "Too long"},
    ),
    "approve an edited draft": (
        _edit("Dear customer,\nWe are sorry."),
        _edit("Dear customer,\r\nWe are sorry.\n"),
        _edit("Dear customer,\nWe apologise."),
    ),
    "approve as drafted": (
        {"action": "approve"},
        {"action": "approve"},
        _edit("Dear customer,\nSomething else entirely."),
    ),
    "feedback": (
        {"action": "revise", "feedback": "shorter"},
        {"action": "revise", "feedback": " shorter "},
        {"action": "revise", "feedback": "longer"},
    ),
}


@pytest.mark.parametrize("case", REVIEW_CASES)
def test_the_identical_decision_again_is_its_receipt_and_a_different_one_is_refused(
    client, manager, start_review, on_commit, case
):
    first, same, different = REVIEW_CASES[case]
    session, item = start_review()
    client.force_login(manager)
    receipt = _first(client, item, first, on_commit)
    stored = Item.objects.get(pk=item.pk)

    with on_commit():
        again = _decide(client, item, same)
    assert again.status_code == 200, again.content
    assert again.json()["receipt"] == receipt

    refused = _decide(client, item, different)
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert error["code"] in ("already_decided", "superseded")  # feedback: a newer draft exists by now
    assert "manager" in error["message"]
    assert Answer.objects.filter(session=session, interrupt_id=item.interrupt_id).count() == 1
    assert AuditEntry.objects.filter(action="interrupt.decide", target_id=str(item.pk)).count() == 1
    after = Item.objects.get(pk=item.pk)
    assert (after.decision, after.reason, after.response, after.edit_diff) == (
        stored.decision,
        stored.reason,
        stored.response,
        stored.edit_diff,
    )


def test_a_rejection_sent_again_with_another_reason_names_who_rejected(client, manager, start_review, on_commit):
    _, item = start_review()
    client.force_login(manager)
    _first(client, item, {"action": "reject", "reason": "Wrong tone"}, on_commit)
    refused = _decide(client, item, {"action": "reject", "reason": "Too long"})
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert (error["code"], error["decided_by"], error["decision"]) == ("already_decided", "manager", "reject")
    assert error["message"].startswith("This request was already rejected by manager at ")
    assert Item.objects.get(pk=item.pk).reason == "Wrong tone"


def test_a_form_answer_again_is_its_receipt_and_another_answer_is_refused(client, manager, start_session, on_commit):
    session, [item] = start_session("incident-triage", {"title": "Checkout down", "details": "502s"})
    client.force_login(manager)
    receipt = _first(client, item, {"action": "answer", **TRIAGE}, on_commit)
    answered = Item.objects.get(pk=item.pk).response

    with on_commit():
        again = _decide(client, item, {"action": "answer", **TRIAGE})
    assert again.status_code == 200, again.content
    assert again.json()["receipt"] == receipt

    refused = _decide(client, item, {"action": "answer", **TRIAGE, "f.severity": '"low"'})
    assert refused.status_code == 409, refused.content
    assert refused.json()["error"]["code"] == "already_decided"
    assert Item.objects.get(pk=item.pk).response == answered
    assert Answer.objects.filter(session=session, interrupt_id=item.interrupt_id).count() == 1


def test_a_confirmation_rejected_again_with_another_reason_is_refused(client, personas, start_session, on_commit):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    receipt = _first(client, item, {"action": "reject", "reason": "Not a VIP any more"}, on_commit)
    with on_commit():
        again = _decide(client, item, {"action": "reject", "reason": "Not a VIP any more"})
    assert (again.status_code, again.json()["receipt"]) == (200, receipt)
    refused = _decide(client, item, {"action": "reject", "reason": "Wrong customer"})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "already_decided"
    assert Item.objects.get(pk=item.pk).reason == "Not a VIP any more"


def test_an_approval_again_before_the_item_heard_of_it_is_no_first_of_two(client, manager, start_review):
    # The first approval is stored on the session's interrupt; its relay to the item (run after
    # the commit, which this test's transaction never reaches) has not happened yet.
    _, item = start_review()
    client.force_login(manager)
    first = _decide(client, item, {"action": "approve"})
    assert first.status_code == 200, first.content
    assert Item.objects.get(pk=item.pk).status == "pending"  # the item lags the answer
    again = _decide(client, item, {"action": "approve"})
    assert again.status_code == 200, again.content
    assert again.json()["receipt"] == first.json()["receipt"]
    assert "approvals" not in again.json()  # not "1 of 2 approvals": there is no second to wait for
    page = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}, follow=True)
    assert "First approval recorded" not in page.content.decode()
