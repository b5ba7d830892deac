"""The refund approval workflow: ADK's ``human_in_loop`` and ``tool_confirmation`` samples as a product.

A refund agent handles a refund request. It first calls the long-running ``ask_for_approval``
tool: the call stays pending until its late result is posted, without the tool running again.
In the console the workflow's approval policies (:data:`POLICIES`, registered in
``demo/__init__.py``) decide it first: up to :data:`POLICY_LIMIT` the policy approves it itself,
with its reason; above :data:`FOUR_EYES_LIMIT` two different people must approve it in the inbox;
in between one person does (or an outside system, through the API). Then it calls
``submit_refund``, which requires a person's confirmation before it runs; a decline is enforced
by the engine and the refund is never submitted.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from reviewconsole.workflows import (
    ApprovalPolicy,
    DecisionAttempt,
    FunctionCall,
    FunctionTool,
    LlmAgent,
    LlmRequest,
    LongRunningFunctionTool,
    Model,
)

__all__ = [
    "FOUR_EYES_LIMIT",
    "KIND",
    "POLICIES",
    "POLICY_LIMIT",
    "REASON_LIMIT",
    "RefundInput",
    "build",
    "offline_agent",
    "same_order_no_larger_refund",
    "submitted_refunds",
]

KIND = "refund"
POLICY_LIMIT = 100.0
"""Refunds above this amount (in dollars) need a person's approval; up to it the policy approves."""
FOUR_EYES_LIMIT = 1000.0
"""Refunds above this amount (in dollars) need the approvals of two different people."""
REASON_LIMIT = 500.0
"""Approving a refund above this amount (in dollars) needs the reviewer's reason (the workflow's
``before_decision`` check in ``demo/__init__.py``)."""

POLICIES = (
    ApprovalPolicy(
        name="small-refunds",
        tool="ask_for_approval",
        when=f"double(args.amount) <= {POLICY_LIMIT}",
        decide="approve",
        reason=f"Refunds up to ${POLICY_LIMIT:.0f} are approved by policy.",
    ),
    ApprovalPolicy(
        name="refund-approval",
        tool="ask_for_approval",
        when="true",
        four_eyes_over=f"double(args.amount) > {FOUR_EYES_LIMIT}",
    ),
)
"""The refund's approval policies (``WorkflowSpec.policies``): small refunds approved by policy,
the rest by a person, above the four-eyes limit by two."""

submitted_refunds: list[dict[str, Any]] = []
"""Refunds submitted in this process (a stand-in for the payment system; tests read it)."""


class RefundInput(BaseModel):
    """What starts a session: the order, the amount (dollars) and the customer's reason."""

    order_id: str = Field(min_length=1, max_length=100)
    amount: float = Field(gt=0, le=1_000_000)
    reason: str = Field(min_length=1, max_length=5_000)


def ask_for_approval(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Ask for a refund's approval (by policy up to the limit, else by a manager). The decision arrives later.

    Args:
        order_id: the order to refund.
        amount: the refund in dollars.
        reason: why the customer wants a refund.
    """
    return {
        "status": "pending",
        "order_id": order_id,
        "amount": amount,
        "reason": reason,
        "policy_limit": POLICY_LIMIT,
        "ticketId": f"refund-{order_id}",
    }


def submit_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Submit the refund to the payment system.

    Args:
        order_id: the order to refund.
        amount: the refund in dollars.
    """
    submitted_refunds.append({"order_id": order_id, "amount": amount})
    return {"status": "submitted", "order_id": order_id, "amount": amount}


def _number(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing, a boolean or no number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def same_order_no_larger_refund(attempt: DecisionAttempt) -> str | None:
    """The refund's check before a decision (``WorkflowSpec.before_decision``): an approval of
    ``submit_refund`` with edited arguments may lower the amount, never raise it (one reviewer could
    otherwise approve $50,000 where $250 was approved) nor take it to $0 or below (a negative refund
    would run: the input's ``amount > 0`` binds only the start), nor refund another order
    (``order_id``: the approval was for this one). Returns the refusal naming the field, or None.

    Edited arguments without ``order_id`` or ``amount``, or with an amount that is no number, are
    left to the tool's parameter schema (``answer_invalid``)."""
    edited = attempt.response.get("args") if isinstance(attempt.response, dict) else None
    if attempt.decision != "approve" or not isinstance(edited, dict):
        return None
    asked_order = attempt.tool_args.get("order_id")
    if asked_order is not None and "order_id" in edited and edited["order_id"] != asked_order:
        return (
            f"An edited refund must keep order_id {asked_order}: the approval was for that order; "
            "only the amount may be lowered. Nothing was recorded."
        )
    raised = _number(edited.get("amount"))
    if raised is None:
        return None  # missing or not a number: the tool's parameter schema refuses it (answer_invalid)
    if raised <= 0:
        return (
            "An edited refund's amount must be more than $0; to refund nothing, decline the refund instead. "
            "Nothing was recorded."
        )
    asked = _number(attempt.tool_args.get("amount"))
    if asked is None:
        return None
    if raised > asked:
        return (
            f"An edited refund's amount may not be larger than the amount asked for (${asked:,.2f}); "
            "lower it or keep it. Nothing was recorded."
        )
    return None


def build(model: Model | None = None, *, name: str = "refund_agent") -> LlmAgent:
    """The refund agent with its approval and submission tools."""
    return LlmAgent(
        name,
        model=model,
        instruction=(
            "Handle refund requests. Every refund needs ask_for_approval first; "
            "submit approved refunds with submit_refund; tell the customer the outcome."
        ),
        tools=[
            LongRunningFunctionTool(ask_for_approval),
            FunctionTool(
                submit_refund,
                require_confirmation=True,
                decline_message="The refund was not submitted: a reviewer declined it.",
            ),
        ],
        input_schema=RefundInput,
        description="Approve and submit customer refunds with a person in the loop.",
    )


def offline_agent(request: LlmRequest) -> Any:
    """The offline model's turns: the approval, then submission, then a summary."""
    first = next((c.text for c in request.contents if c.role == "user" and c.text), "{}")
    try:
        data = json.loads(first)
    except ValueError:
        data = {}
    order_id = str(data.get("order_id", "unknown"))
    amount = float(data.get("amount", 0) or 0)
    reason = str(data.get("reason", ""))
    responses = [r for c in request.contents for r in c.function_responses()]
    last = responses[-1] if responses else None
    if last is None:
        args = {"order_id": order_id, "amount": amount, "reason": reason}
        return FunctionCall(name="ask_for_approval", args=args)
    if last.name == "ask_for_approval":
        status = str(last.response.get("status", "")).lower()
        if status == "pending":
            return f"Your refund of ${amount:.2f} for order {order_id} is waiting for a manager's approval."
        if status == "approved":
            return FunctionCall(name="submit_refund", args={"order_id": order_id, "amount": amount})
        return f"Your refund for order {order_id} was not approved."
    if last.name == "submit_refund":  # what ran: a reviewer may have lowered the amount
        if last.response.get("status") == "submitted":
            ran_order, ran_amount = last.response.get("order_id", order_id), last.response.get("amount", amount)
            return f"Your refund of ${float(ran_amount):.2f} for order {ran_order} has been submitted."
        return f"Your refund for order {order_id} was not submitted."
    return "How can I help with your refund?"
