"""Conditions of approval policies (``workflows/conditions.py``): CEL over args and state, validated
with a message naming what is wrong; an unusable one answers the caller's safe default."""

from __future__ import annotations

import pytest

from reviewconsole.workflows.conditions import condition_error, condition_holds, rule_error


@pytest.mark.parametrize(
    ("text", "args", "state", "holds"),
    [
        ("args.amount > 100", {"amount": 150}, {}, True),
        ("args.amount > 100", {"amount": 99.5}, {}, False),
        ('args.amount > 10 && state.tier == "vip"', {"amount": 11}, {"tier": "vip"}, True),
        ('args.amount > 10 && state.tier == "vip"', {"amount": 11}, {"tier": "basic"}, False),
        ("true", {}, {}, True),
        ("has(args.note)", {}, {}, False),
        ('args.order_id.startsWith("X-")', {"order_id": "X-9"}, {}, True),
    ],
)
def test_a_condition_reads_the_arguments_and_the_state(text, args, state, holds):
    assert condition_error(text) is None
    assert condition_holds(text, args=args, state=state, default=not holds) is holds


@pytest.mark.parametrize("default", [True, False])
def test_a_condition_that_cannot_be_evaluated_answers_the_default(default):
    assert condition_holds("args.amount > 100", args={}, state={}, default=default) is default  # missing
    assert condition_holds("args.amount > 100", args={"amount": "lots"}, state={}, default=default) is default
    assert condition_holds("args.amount", args={"amount": 3}, state={}, default=default) is default  # not a bool


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("args.amount >", "is not valid CEL: Failed to parse expression"),
        ("amount > 100", "names amount: it may use only args"),
        ("os.system(1) == 0", "names os"),
        ("shell(args.cmd)", "calls shell, which CEL does not define"),
        ("", "The condition is empty"),
    ],
)
def test_a_bad_condition_says_what_is_wrong(text, says):
    assert says in condition_error(text)


def test_a_bad_rule_is_named_with_its_field():
    assert rule_error(name="big", tool="t", when="args.amount >", decide=None, four_eyes_over=None).startswith(
        "Approval policy 'big', when: The condition 'args.amount >' is not valid CEL"
    )
    assert "Approval policy 'big', four_eyes_over:" in rule_error(
        name="big", tool="t", when="true", decide=None, four_eyes_over="limit > 3"
    )
    assert "decide must be 'approve', 'reject' or None" in rule_error(
        name="big", tool="t", when="true", decide="maybe", four_eyes_over=None
    )
    assert "cannot also ask for four eyes" in rule_error(
        name="big", tool="t", when="true", decide="approve", four_eyes_over="true"
    )
    assert rule_error(name="ok", tool="*", when="args.amount <= 100", decide="approve", four_eyes_over=None) is None


def test_a_condition_with_too_many_list_macros_is_refused_when_saved():
    """Nested macros run for seconds in the relay (this session's attack: depth 6 took 13 s)."""
    from reviewconsole.workflows.conditions import MAX_MACROS, condition_error

    nested = "[1, 2].map(a, [1, 2].map(b, [1, 2].map(c, c))).size() > 0"
    message = condition_error(nested)
    assert message is not None and f"at most {MAX_MACROS}" in message
    assert condition_error("args.amount > 100") is None
