"""What the refund's page says (found by the last session's review of issue 15): its title was
"Refund above the policy limit: approve it?" also on a refund the policy approved itself, and its
reason field said "required to reject" where the workflow's check asks a reason to approve."""

from __future__ import annotations

import re

from reviewconsole.inbox.models import Item


def _page(client, user, item):
    client.force_login(user)
    return client.get(f"/inbox/items/{item.pk}/").content.decode()


def _title(page):
    return re.search(r'<h2 id="refund-title">(.*?)</h2>', page).group(1)


def _label(page):
    return re.search(r'<label for="reason">(.*?)</label>', page).group(1)


def test_a_refund_the_policy_decided_is_not_called_above_the_limit(start_session, personas, client):
    session, [confirmation] = start_session("refund-approval", {"order_id": "W-1", "amount": 40, "reason": "x"})
    decided = Item.objects.get(session=session, function_name="ask_for_approval")
    assert decided.decided_by_label == "policy: small-refunds"
    page = _page(client, personas.other_reviewer, decided)
    assert _title(page) == "Refund approval"
    assert "above the policy limit" not in page and "above the limit</span>" not in page
    assert _title(_page(client, personas.other_reviewer, confirmation)) == "Submit this refund?"


def test_the_reason_label_names_the_decisions_that_need_one(start_session, personas, client, settings):
    _, [mid] = start_session("refund-approval", {"order_id": "W-2", "amount": 300, "reason": "x"})
    _, [large] = start_session("refund-approval", {"order_id": "W-3", "amount": 700, "reason": "x"})
    assert _title(_page(client, personas.other_reviewer, large)) == "Approve this refund?"
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "REJECT_REASON_REQUIRED": False}
    assert _label(_page(client, personas.other_reviewer, mid)) == "Reason, kept with your decision"
    assert _label(_page(client, personas.other_reviewer, large)) == (
        "Reason, kept with your decision (required to approve)"
    )
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "REJECT_REASON_REQUIRED": True}
    assert _label(_page(client, personas.other_reviewer, mid)) == "Reason, kept with your decision (required to reject)"
    assert _label(_page(client, personas.other_reviewer, large)) == (
        "Reason, kept with your decision (required to approve or reject)"
    )
