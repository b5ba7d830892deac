"""A purchase order approved through a structured form.

START → price_order (totals the lines; orders up to :data:`AUTO_APPROVE_LIMIT` go straight on) →
``review``: ask_approval (a ``RequestInput`` whose ``response_schema`` is :class:`Approval`: a
decision, the cost center to charge, whether to expedite, a comment; the inbox renders it as a
form and validates the answer on the server) → route_decision → ``approve``: place_order, or
``reject``: decline_order. No model is called: every step is plain Python.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reviewconsole.workflows import Event, RequestInput, Workflow

__all__ = ["AUTO_APPROVE_LIMIT", "KIND", "Approval", "LineItem", "PurchaseOrderInput", "build"]

KIND = "purchase_order"
AUTO_APPROVE_LIMIT = 500.0
"""Orders whose total (in the order's currency) is at most this are placed without a person."""


class LineItem(BaseModel):
    """One line of the order: what, how many, at what unit price."""

    description: str = Field(min_length=1, max_length=200)
    quantity: int = Field(ge=1, le=100_000)
    unit_price: float = Field(gt=0, le=1_000_000)


class PurchaseOrderInput(BaseModel):
    """What starts a session: the order as the purchasing system sends it."""

    po_number: str = Field(min_length=1, max_length=50)
    requester: str = Field(min_length=1, max_length=100)
    supplier: str = Field(min_length=1, max_length=200)
    currency: Literal["USD", "EUR", "GBP"] = "USD"
    lines: list[LineItem] = Field(min_length=1, max_length=50)
    justification: str = Field(default="", max_length=2_000)


class Approval(BaseModel):
    """An approver's answer: the form the inbox shows."""

    decision: Literal["approve", "reject"]
    cost_center: str = Field(pattern=r"^[A-Z]{2}-[0-9]{3,6}$", description="The cost center to charge, e.g. OP-1234.")
    expedite: bool = Field(default=False, description="Ask the supplier for express delivery.")
    comment: str = Field(default="", max_length=1_000, description="Said to the requester.")


def price_order(node_input: Any) -> Event:
    """Total the lines; route ``auto`` (at most the limit) or ``review``."""
    order = PurchaseOrderInput.model_validate(node_input).model_dump()
    total = round(sum(line["quantity"] * line["unit_price"] for line in order["lines"]), 2)
    route = "auto" if total <= AUTO_APPROVE_LIMIT else "review"
    return Event(state={"order": order, "total": total}, output=order, route=route)


def ask_approval(order: dict[str, Any], total: float) -> RequestInput:
    """Ask an approver to approve or reject the order, with the :class:`Approval` form."""
    return RequestInput(
        message=f"Approve purchase order {order['po_number']}: {total:.2f} {order['currency']} "
        f"to {order['supplier']}, requested by {order['requester']}.",
        payload={"order": order, "total": total},
        response_schema=Approval,
        metadata={"kind": KIND},
    )


def route_decision(node_input: Any) -> Event:
    """Keep the approval in the state; route on its decision."""
    approval = Approval.model_validate(node_input).model_dump()
    return Event(state={"approval": approval}, route=approval["decision"])


def place_order(order: dict[str, Any], total: float, approval: dict[str, Any] | None = None) -> Event:
    """Place the order (here: say so; a real package would call the purchasing system)."""
    how = "auto-approved" if approval is None else f"approved, charged to {approval['cost_center']}"
    express = " (expedited)" if approval and approval["expedite"] else ""
    return Event(
        message=f"Purchase order {order['po_number']} placed with {order['supplier']}{express}: "
        f"{total:.2f} {order['currency']}, {how}.",
        state={"outcome": "placed"},
    )


def decline_order(order: dict[str, Any], approval: dict[str, Any]) -> Event:
    """Tell the requester the order was rejected, and why."""
    why = f": {approval['comment']}" if approval["comment"] else "."
    return Event(message=f"Purchase order {order['po_number']} rejected{why}", state={"outcome": "rejected"})


def build(model: Any = None) -> Workflow:
    """The workflow (it calls no model, so ``model`` is unused)."""
    return Workflow(
        "purchase_order",
        edges=[
            ("START", price_order),
            (price_order, {"auto": place_order, "review": ask_approval}),
            (ask_approval, route_decision),
            (route_decision, {"approve": place_order, "reject": decline_order}),
        ],
        input_schema=PurchaseOrderInput,
        description="A purchase order above the limit approved through a structured form.",
        version="1",
    )
