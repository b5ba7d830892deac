"""The VIP discount workflow: ADK's ``node_as_tool`` sample as a product.

A customer-service agent calls ``customer_lookup_workflow`` (a Workflow used as a tool) to find
the customer's tier, then ``calculate_discount`` (a node used as a tool). For a VIP tier the node
asks a person to confirm the VIP discount (``RequestInput`` with id ``confirm_vip_discount``) and
runs again with the answer (``rerun_on_resume``). The agent then tells the customer the result.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from reviewconsole.workflows import (
    Context,
    Event,
    FunctionCall,
    LlmAgent,
    LlmRequest,
    Model,
    RequestInput,
    Workflow,
    node,
)
from reviewconsole.workflows.answers import AnswerShapeError, read_yes_no

__all__ = ["KIND", "VipDiscountInput", "build", "offline_agent"]

KIND = "vip_discount"
VIP_DISCOUNT = "20%"
STANDARD_DISCOUNT = "5%"
CUSTOMERS = {
    "c123": {"name": "Ada Lovelace", "tier": "Verified VIP Member"},
    "c456": {"name": "Grace Hopper", "tier": "Standard"},
}


class VipDiscountInput(BaseModel):
    """What starts a session: the customer and what they asked."""

    customer_id: str = Field(min_length=1, max_length=100)
    message: str = Field(default="What discount can I get?", max_length=5_000)


class LookupInput(BaseModel):
    user_id: str


def lookup_customer_data(node_input: LookupInput) -> dict[str, Any]:
    """Find the customer's tier (a stand-in for a CRM lookup)."""
    customer = CUSTOMERS.get(node_input.user_id, {"name": "Unknown customer", "tier": "Standard"})
    return {"user_id": node_input.user_id, **customer}


def _confirmed(answer: Any) -> bool:
    """Whether the answer confirms the VIP discount (``reviewconsole.workflows.answers.read_yes_no``,
    the reading the doors use; a timeout, or a shape the doors refuse, declines it)."""
    try:
        decision = read_yes_no(answer)
    except AnswerShapeError:
        return False
    return decision is not None and decision.action == "approve"


@node(rerun_on_resume=True)
def calculate_discount(tier: str, ctx: Context, user_id: str = "") -> Any:
    """Calculate the discount for a customer tier; VIP discounts need a person's confirmation.

    Args:
        tier: the customer's tier, as returned by the lookup.
        user_id: the customer's id.
    """
    yield Event(message=f"Checking discount rules for tier '{tier}'...")
    if "VIP" not in tier:
        yield f"{STANDARD_DISCOUNT} off"
        return
    answer = ctx.resume_inputs.get("confirm_vip_discount")
    if answer is None:
        yield RequestInput(
            interrupt_id="confirm_vip_discount",
            message=f"Apply VIP discount for tier '{tier}'?",
            payload={"customer_id": user_id, "tier": tier, "proposed_discount": VIP_DISCOUNT},
            metadata={"kind": KIND},
        )
        return
    yield f"{VIP_DISCOUNT} off" if _confirmed(answer) else f"{STANDARD_DISCOUNT} off (VIP declined)"


def build(model: Model | None = None, *, name: str = "customer_service_agent") -> LlmAgent:
    """The root agent with its two tools."""
    lookup = Workflow(
        "customer_lookup_workflow",
        edges=[("START", lookup_customer_data)],
        input_schema=LookupInput,
        description="Look up a customer's name and tier by user id.",
    )
    return LlmAgent(
        name,
        model=model,
        instruction="Look up the customer, calculate their discount, and tell them the result in one sentence.",
        tools=[lookup, calculate_discount],
        input_schema=VipDiscountInput,
        description="Answer a customer's discount question; VIP discounts need a person's confirmation.",
    )


def _responses(request: LlmRequest) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for content in request.contents:
        for response in content.function_responses():
            found[response.name] = response.response
    return found


def offline_agent(request: LlmRequest) -> Any:
    """The offline model's turns: look up, calculate, then summarise."""

    first = next((c.text for c in request.contents if c.role == "user" and c.text), "{}")
    try:
        data = json.loads(first)
    except ValueError:
        data = {}
    customer_id = str(data.get("customer_id", "unknown"))
    seen = _responses(request)
    if "customer_lookup_workflow" not in seen:
        return FunctionCall(name="customer_lookup_workflow", args={"user_id": customer_id})
    if "calculate_discount" not in seen:
        customer = seen["customer_lookup_workflow"]
        return FunctionCall(name="calculate_discount", args={"tier": customer.get("tier", ""), "user_id": customer_id})
    customer = seen["customer_lookup_workflow"]
    discount = seen["calculate_discount"].get("result", "")
    return f"{customer.get('name', 'The customer')} ({customer.get('tier', '')}) gets {discount}."
