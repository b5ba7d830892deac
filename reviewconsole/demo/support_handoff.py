"""The support handoff workflow: a triage agent, a refund agent and an order agent share one case.

Triage hands off to the refund agent or the order agent; the refund agent to the order agent;
the order agent back to triage (``transfer_to_agent``, see :class:`engine.HandoffGroup`).
``lookup_order_details`` runs without approval; ``submit_refund`` and ``submit_replacement`` wait
for a person's approval (an inbox item, and an AG-UI ``tool_call`` interrupt). The case ends when
an agent's reply ends with "case complete."; any other reply waits for the customer's next
message. Each agent's turn is one node run (one AG-UI step).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from reviewconsole.workflows import Content, FunctionCall, FunctionTool, HandoffGroup, LlmAgent, LlmRequest, Model, Part

__all__ = [
    "KIND",
    "SupportInput",
    "build",
    "is_case_complete",
    "offline_order",
    "offline_refund",
    "offline_triage",
    "submitted",
]

KIND = "support_case"
DONE = "case complete."
ORDERS = {
    "o-1001": {"order_id": "o-1001", "item": "Espresso machine", "amount": 249.0, "status": "delivered, damaged"},
    "o-1002": {"order_id": "o-1002", "item": "Coffee grinder", "amount": 89.0, "status": "in transit"},
}
submitted: list[dict[str, Any]] = []
"""Refunds and replacements submitted in this process (a stand-in for the order system; tests read it)."""


class SupportInput(BaseModel):
    """What starts a case: the customer's message."""

    message: str = Field(min_length=1, max_length=5_000, description="What the customer wrote.")


def is_case_complete(text: str) -> bool:
    """True when a reply closes the case (it ends with "case complete.")."""
    return text.rstrip().lower().endswith(DONE)


def lookup_order_details(order_id: str) -> dict[str, Any]:
    """Look up an order: item, amount (dollars) and delivery status.

    Args:
        order_id: the order, e.g. o-1001.
    """
    return ORDERS.get(order_id, {"order_id": order_id, "item": "unknown", "amount": 0.0, "status": "not found"})


def submit_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order to the customer's original payment method.

    Args:
        order_id: the order to refund.
        amount: the refund in dollars.
    """
    submitted.append({"kind": "refund", "order_id": order_id, "amount": amount})
    return {"status": "refunded", "order_id": order_id, "amount": amount}


def submit_replacement(order_id: str) -> dict[str, Any]:
    """Ship a replacement for an order.

    Args:
        order_id: the order to replace.
    """
    submitted.append({"kind": "replacement", "order_id": order_id})
    return {"status": "replacement shipped", "order_id": order_id}


def build(model: Model | None = None, *, name: str = "support") -> HandoffGroup:
    """The three agents in one handoff group; ``model`` answers for all (None: the runner's)."""
    lookup = FunctionTool(lookup_order_details)
    triage = LlmAgent(
        "triage_agent",
        model=model,
        instruction=(
            "You are the first contact of customer support. Hand refunds to refunds_agent and order "
            f"questions (replacements, deliveries) to order_agent. When the case is resolved, end with '{DONE}'"
        ),
        handoffs=["refunds_agent", "order_agent"],
    )
    refund = LlmAgent(
        "refunds_agent",
        model=model,
        instruction="Look the order up, submit the refund (a person approves it), then hand over to order_agent.",
        tools=[
            lookup,
            FunctionTool(submit_refund, require_confirmation=True, decline_message="A reviewer declined the refund."),
        ],
        handoffs=["order_agent"],
    )
    order = LlmAgent(
        "order_agent",
        model=model,
        instruction="Look the order up, ship a replacement if needed (a person approves it), then hand back to triage.",
        tools=[
            lookup,
            FunctionTool(
                submit_replacement, require_confirmation=True, decline_message="A reviewer declined the replacement."
            ),
        ],
        handoffs=["triage_agent"],
    )
    return HandoffGroup(
        name,
        [triage, refund, order],
        done_when=is_case_complete,
        description="A support case handed between triage, refund and order agents.",
    )


# -- the offline model's policies (deterministic; they read the conversation) ---------------------


def _customer_text(request: LlmRequest) -> str:
    texts = [c.text for c in request.contents if c.role == "user" and c.text and not c.text.startswith("For context")]
    first = texts[0] if texts else ""
    try:
        data = json.loads(first)
    except ValueError:
        return " ".join(texts)
    message = data.get("message", first) if isinstance(data, dict) else first
    return " ".join([str(message), *texts[1:]])


def _order_id(request: LlmRequest) -> str:
    found = re.search(r"\bo-\d+\b", _customer_text(request), re.IGNORECASE)
    return found.group(0).lower() if found else "o-1001"


def _responses(request: LlmRequest) -> dict[str, dict[str, Any]]:
    return {r.name: r.response for c in request.contents for r in c.function_responses()}


def _say_and_transfer(text: str, target: str) -> Content:
    call = FunctionCall(name="transfer_to_agent", args={"agent_name": target})
    return Content(role="model", parts=[Part(text=text), Part(function_call=call)])


def offline_triage(request: LlmRequest) -> Any:
    """Triage: route the case on its first turn; close it when it comes back."""
    if "transfer_to_agent" in _responses(request):
        return f"Thank you for your patience: your order {_order_id(request)} is taken care of. Case complete."
    text = _customer_text(request).lower()
    if "refund" in text or "money back" in text:
        return _say_and_transfer("I am passing you to our refunds team.", "refunds_agent")
    if any(word in text for word in ("order", "replace", "deliver", "broken", "damaged", "late")):
        return _say_and_transfer("I am passing you to our orders team.", "order_agent")
    return "How can I help you today? Tell me your order number and what went wrong."


def offline_refund(request: LlmRequest) -> Any:
    """Refund agent: look up, submit the refund (approved by a person), hand over to orders."""
    order_id = _order_id(request)
    seen = _responses(request)
    if "lookup_order_details" not in seen:
        return FunctionCall(name="lookup_order_details", args={"order_id": order_id})
    if "submit_refund" not in seen:
        amount = float(seen["lookup_order_details"].get("amount") or 0.0)
        return FunctionCall(name="submit_refund", args={"order_id": order_id, "amount": amount})
    ran = seen["submit_refund"]  # what ran: a reviewer may have edited the arguments
    if ran.get("status") == "refunded":
        said = f"Your refund of ${float(ran.get('amount') or 0):.2f} for {ran.get('order_id', order_id)} is on its way."
        return _say_and_transfer(said, "order_agent")
    return _say_and_transfer(f"The refund for {order_id} was not approved.", "order_agent")


def offline_order(request: LlmRequest) -> Any:
    """Order agent: look up, ship a replacement (approved by a person), hand back to triage."""
    order_id = _order_id(request)
    seen = _responses(request)
    if "lookup_order_details" not in seen:
        return FunctionCall(name="lookup_order_details", args={"order_id": order_id})
    if "submit_replacement" not in seen:
        return FunctionCall(name="submit_replacement", args={"order_id": order_id})
    if "error" in seen["submit_replacement"]:
        return _say_and_transfer(f"No replacement will be shipped for {order_id}.", "triage_agent")
    return _say_and_transfer(f"A replacement for {order_id} has been shipped.", "triage_agent")
