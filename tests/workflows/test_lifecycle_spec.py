"""``WorkflowSpec.before_decision`` and ``on_arrival``: the declarative check's rule, and the
system check E012 for a policy or a check list that is not one."""

from __future__ import annotations

import pytest

from reviewconsole.workflows import DecisionAttempt, reason_required_above
from reviewconsole.workflows.checks_before_decision import first_refusal
from tests.workflows.test_checks import _good, _one


def attempt(decision="approve", reason="", **kw):
    fields = {
        "workflow": "refund-approval",
        "session_id": "s",
        "interrupt_id": "i",
        "interrupt_kind": "long_running",
        "request_kind": "refund",
        "function_name": "ask_for_approval",
        "decision": decision,
        "reason": reason,
        "response": {"status": "approved"},
        "asked": {"amount": 10},
        "tool_args": {"amount": 750},
    }
    return DecisionAttempt(**{**fields, **kw})


def test_reason_required_above_refuses_only_a_reasonless_decision_above_the_limit():
    check = reason_required_above("amount", 500)
    assert check(attempt()) == "Approving requires a reason when amount is above 500; give one. Nothing was recorded."
    assert check(attempt(reason="Loyal customer")) is None
    assert check(attempt(decision="reject")) is None
    assert check(attempt(tool_args={"amount": 500})) is None
    assert check(attempt(tool_args={}, asked={"amount": 900})) is not None  # the payload when no tool args
    assert check(attempt(tool_args={"amount": "900"})) is None  # not a number: not this rule's to judge


def test_reason_required_above_names_its_functions_and_message():
    check = reason_required_above(
        "amount", 100, decisions=("approve", "reject"), functions=("submit_refund",), message="No."
    )
    assert check(attempt()) is None  # asked by another function
    assert check(attempt(decision="reject", function_name="submit_refund")) == "No."
    with pytest.raises(ValueError):
        reason_required_above("amount", 1, decisions=())


def test_the_first_refusal_wins_and_accepting_checks_pass():
    assert first_refusal([lambda a: None, lambda a: "one", lambda a: "two"], attempt()) == "one"
    assert first_refusal([lambda a: None], attempt()) is None


@pytest.mark.parametrize(
    ("keyword", "text"),
    [("on_arrival='later'", "on_arrival='later' is not a policy"), ("before_decision=('x',)", "tuple of callables")],
)
def test_a_policy_or_check_list_that_is_not_one_is_e011(write_module, register, keyword, text):
    source = _good("hello").replace("input_schema=Start)]", f"input_schema=Start, {keyword})]")
    code, msg, hint, _ = _one(write_module, register, "lifecycle_flows", source)
    assert code == "reviewconsole.workflows.E012" and text in msg
    assert hint
