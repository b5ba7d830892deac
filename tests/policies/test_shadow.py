"""Shadow mode (``policies/shadow.py``): a shadow rule records "would have decided X" beside the
person's decision, and the admin shows how often they agreed (agreed / compared)."""

from __future__ import annotations

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.policies.models import PolicyRule, PolicyVerdict
from reviewconsole.policies.shadow import agreement


def test_a_shadow_rule_is_compared_with_people(start_session, personas, client, on_commit):
    PolicyRule.objects.create(
        workflow="refund-approval",
        name="approve-mid",
        tool="ask_for_approval",
        when="double(args.amount) <= 500.0",
        decide="approve",
        shadow=True,
    )
    decisions = [("approve", ""), ("reject", "Looks like fraud"), ("approve", "")]
    for n, (action, reason) in enumerate(decisions):
        _, [item] = start_session("refund-approval", {"order_id": f"S-{n}", "amount": 300, "reason": "broken"})
        assert item.is_pending, "a shadow rule decides nothing"
        with on_commit():
            interrupt_decide(interrupt=item, user=personas.other_reviewer, action=action, reason=reason)
        verdict = PolicyVerdict.objects.get(session_interrupt=item.session_interrupt)
        assert (verdict.shadow_decision, verdict.person_decision) == ("approve", action)
        assert verdict.agreed is (action == "approve")
    assert agreement("refund-approval", "approve-mid") == (2, 3)
    client.force_login(personas.admin)
    page = client.get("/admin/policies/policyrule/").content.decode()
    assert "2 / 3 (67%)" in page
    PolicyRule.objects.filter(name="approve-mid").update(when="args.amount >")  # a bad row never decides
    _, [item] = start_session("refund-approval", {"order_id": "S-9", "amount": 300, "reason": "broken"})
    assert PolicyVerdict.objects.get(session_interrupt=item.session_interrupt).shadow_decision == ""
