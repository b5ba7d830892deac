"""Which rules apply and what they say (``policies/rules.py``): the workflow's rules, the admin's
replacing them by name or tried first, and each kind of rule."""

from __future__ import annotations

import pytest

from reviewconsole.policies.models import PolicyRule
from reviewconsole.policies.rules import evaluate, rules_for

pytestmark = pytest.mark.django_db


def _rule(name, **fields):
    return PolicyRule.objects.create(workflow="refund-approval", name=name, **fields)


def test_the_workflows_own_rules_apply_to_their_tool_only():
    assert [(r.name, r.source) for r in rules_for("refund-approval", "ask_for_approval")] == [
        ("small-refunds", "workflow"),
        ("refund-approval", "workflow"),
    ]
    assert rules_for("refund-approval", "submit_refund") == []
    assert rules_for("no-such-workflow", "ask_for_approval") == []


def test_an_admin_rule_replaces_the_workflows_of_its_name_and_a_new_one_comes_first():
    _rule(
        "small-refunds",
        tool="ask_for_approval",
        when="double(args.amount) <= 50.0",
        decide="approve",
        replaces_workflow_rule=True,
    )
    _rule("vip-first", tool="*", when='state.tier == "vip"', decide="approve", reason="VIP")
    _rule("switched-off", tool="*", decide="reject", enabled=False)
    assert [(r.name, r.source) for r in rules_for("refund-approval", "ask_for_approval")] == [
        ("vip-first", "admin"),
        ("small-refunds", "admin"),
        ("refund-approval", "workflow"),
    ]
    assert evaluate("refund-approval", "ask_for_approval", {"amount": 80}, {}).rule.name == "refund-approval"
    assert evaluate("refund-approval", "ask_for_approval", {"amount": 80}, {"tier": "vip"}).reason == "VIP"


def test_a_row_sharing_a_workflow_rules_name_without_saying_it_replaces_it_replaces_nothing(caplog):
    """Written around the admin's form (the form refuses it): the workflow's rule stands, logged."""
    _rule("small-refunds", tool="ask_for_approval", when="true", decide="reject", reason="Frozen.")
    assert [(r.name, r.source) for r in rules_for("refund-approval", "ask_for_approval")] == [
        ("small-refunds", "workflow"),
        ("refund-approval", "workflow"),
    ]
    assert evaluate("refund-approval", "ask_for_approval", {"amount": 40}, {}).decide == "approve"
    assert "shares a workflow rule's name without replacing it" in caplog.text


@pytest.mark.parametrize(
    ("amount", "decide", "rule", "approvals"),
    [
        (100, "approve", "small-refunds", 1),  # never a person: the policy approves
        (100.5, "", "refund-approval", 1),  # always a person
        (1000, "", "refund-approval", 1),
        (1000.01, "", "refund-approval", 2),  # four eyes over the condition
    ],
)
def test_the_demo_refunds_rules(amount, decide, rule, approvals):
    verdict = evaluate("refund-approval", "ask_for_approval", {"amount": amount}, {})
    assert (verdict.decide, verdict.rule.name, verdict.approvals_required) == (decide, rule, approvals)


def test_a_rejecting_rule_and_no_rule():
    _rule("frozen", tool="submit_refund", when="args.amount > 0", decide="reject", reason="Frozen.")
    verdict = evaluate("refund-approval", "submit_refund", {"amount": 5}, {})
    assert (verdict.decide, verdict.reason, verdict.governed) == ("reject", "Frozen.", True)
    assert not evaluate("refund-approval", "submit_refund", {"amount": 0}, {}).governed


def test_a_condition_that_cannot_be_evaluated_never_decides_and_asks_four_eyes():
    verdict = evaluate("refund-approval", "ask_for_approval", {"amount": "lots"}, {})
    assert (verdict.decide, verdict.rule.name, verdict.approvals_required) == ("", "refund-approval", 2)


def test_a_shadow_rule_only_says_what_it_would_decide():
    _rule("would-reject", tool="ask_for_approval", when="double(args.amount) > 200.0", decide="reject", shadow=True)
    verdict = evaluate("refund-approval", "ask_for_approval", {"amount": 250}, {})
    assert (verdict.rule.name, verdict.decide) == ("refund-approval", "")
    assert (verdict.shadow.name, verdict.shadow_decision) == ("would-reject", "reject")
    assert evaluate("refund-approval", "ask_for_approval", {"amount": 150}, {}).shadow is None
