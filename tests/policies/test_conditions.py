"""Conditions read from their syntax tree (``workflows/conditions.py``, ``condition_names.py``):
list macros' variables are usable inside their parentheses, the two-macro limit holds, and the
names a condition reads are checked against the tool's parameters and the workflow's state."""

from __future__ import annotations

import pytest

from reviewconsole.workflows import get
from reviewconsole.workflows.condition_names import Root, Schema
from reviewconsole.workflows.conditions import condition_error, condition_holds
from reviewconsole.workflows.policy_scope import roots_for, spec_rule_error

ORDER = {
    "type": "object",
    "properties": {
        "amount": {"type": "number"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
        "notes": {"type": "object", "additionalProperties": True},
    },
    "$defs": {"Line": {"type": "object", "properties": {"price": {"type": "number"}, "sku": {"type": "string"}}}},
}
ROOTS = {"args": Root((Schema.of(ORDER),), "the parameters of order"), "state": Root()}


@pytest.mark.parametrize(
    ("text", "args", "holds"),
    [
        ("args.items.exists(x, x.price > 100.0)", {"items": [{"price": 20.0}, {"price": 150.0}]}, True),
        ("args.items.exists(x, x.price > 100.0)", {"items": [{"price": 20.0}]}, False),
        ("args.items.all(line, line.sku != '')", {"items": [{"sku": "a"}, {"sku": ""}]}, False),
        ("args.items.filter(x, x.price > 10.0).size() == 1", {"items": [{"price": 5.0}, {"price": 50.0}]}, True),
        ("args.items.map(x, x.price).exists(p, p > 40.0)", {"items": [{"price": 50.0}]}, True),
    ],
)
def test_list_macros_and_their_variables_work(text, args, holds):
    assert condition_error(text, ROOTS) is None
    assert condition_holds(text, args=args, state={}, default=not holds) is holds


def test_a_macro_variable_outside_its_parentheses_is_refused():
    error = condition_error("args.items.exists(x, x.price > 1.0) && x.price > 1.0")
    assert error is not None and "names x: it may use only args" in error
    assert "names total" in (condition_error("total > 5") or "")


def test_the_limit_of_two_list_macros_holds_and_a_string_is_not_a_macro():
    three = "args.items.exists(x, x.price > 1.0) || args.items.all(y, y.price > 0.0) || [1].map(z, z).size() > 0"
    assert "has 3 list macros" in (condition_error(three) or "")
    nested = "args.items.exists(x, [1, 2].exists(y, y > 1) && [3].all(z, z > 0))"
    assert "has 3 list macros" in (condition_error(nested) or "")
    assert condition_error("args.note == '.map(.filter(.all(' && args.items.exists(x, x.price > 1.0)") is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("args.amont > 5", "args.amont (the parameters of order: amount, items, notes)"),
        ("args['amont'] > 5", "args.amont (the parameters of order: amount, items, notes)"),
        ("has(args.amont)", "args.amont (the parameters of order"),
        ("args.items.exists(x, x.prce > 100.0)", "x.prce (the fields of args.items[]: price, sku)"),
        ("args.items[0].skuu == ''", "args.items[].skuu (the fields of args.items[]: price, sku)"),
    ],
)
def test_a_name_the_tool_does_not_declare_is_refused_naming_it(text, named):
    error = condition_error(text, ROOTS)
    assert error is not None and "reads what is not declared" in error and named in error, error


def test_open_parts_and_undeclared_state_are_not_checked():
    assert condition_error("args.notes.anything == 'x' && state.whatever == 1", ROOTS) is None


def test_the_demo_refunds_rules_read_what_their_tool_declares():
    spec = get("refund-approval")
    roots, problem = roots_for(spec, "ask_for_approval")
    assert problem is None
    assert roots["args"].declares == "the parameters of ask_for_approval"
    assert roots["state"].schemas == ()  # an LlmAgent root declares no state_schema: state is not checked
    for policy in spec.policies:
        assert spec_rule_error(spec, **{f: getattr(policy, f) for f in ("name", "tool", "when", "decide")},
                               four_eyes_over=policy.four_eyes_over) is None  # fmt: skip
    error = spec_rule_error(spec, name="r", tool="submit_refund", when="args.reason != ''", decide=None,
                            four_eyes_over=None)  # fmt: skip
    assert error == (
        "Approval policy 'r', when: The condition \"args.reason != ''\" reads what is not declared: "
        "args.reason (the parameters of submit_refund: amount, order_id). Check the spelling: an undeclared "
        "name is never there, so the rule would never apply."
    )
