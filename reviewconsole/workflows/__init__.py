"""The registry of workflows the console hosts, by URL-friendly name.

Webhook endpoints, the inbox, the admin, the API and the AG-UI endpoint all find workflows here.
Each entry says how to build the workflow for a model, which queue its interrupts go to, what
kind of request it raises (for the inbox's detail view), and the offline model's policies for its
agents. This package imports only the engine, so scripts and tests can use it without Django.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import BaseNode, Model

from . import email_review, incident_triage, refund_approval, support_handoff, vip_discount

__all__ = ["UnknownWorkflowError", "WorkflowSpec", "all_specs", "get"]


class UnknownWorkflowError(LookupError):
    """No workflow is registered under that name."""


@dataclass(frozen=True)
class WorkflowSpec:
    """A registered workflow.

    ``build(model)`` returns the root node; ``input_schema`` validates starting input (webhooks,
    the API); ``queue`` is the slug of the queue its interrupts go to unless an interrupt names
    another in its metadata; ``offline_policies`` drive the offline model per agent name.

    Inbox settings (an interrupt's own ``metadata`` overrides each): ``due_in_seconds`` (None:
    never due), ``on_expiry`` (``""`` stay overdue, ``"escalate"`` to ``escalate_to``, or
    ``"timeout"``: resume with a timeout payload, see ``reviewconsole/inbox/expiry.py``), and
    ``bulk_approve`` (reviewers may approve several of its items at once).

    ``chat``: a conversation that, after a reply that does not end it, waits for the user's next
    chat message (no interrupt, nothing in the inbox). Only an AG-UI client sends one, so the
    demo makes no webhook endpoint for it: a webhook cannot carry the conversation on.
    """

    name: str
    title: str
    kind: str
    queue: str
    build: Callable[[Model | None], BaseNode]
    input_schema: Any = None
    description: str = ""
    offline_policies: dict[str, Callable[..., Any]] = field(default_factory=dict)
    previous: tuple[Callable[[Model | None], BaseNode], ...] = ()
    """Builders of earlier versions (root ``version`` differs) whose paused sessions still resume."""
    due_in_seconds: float | None = None
    on_expiry: str = ""
    escalate_to: str = ""
    bulk_approve: bool = False
    chat: bool = False
    model: str = "default"
    """The name in ``REVIEWCONSOLE["MODELS"]`` of the model its agents use (``default``: ``REVIEWCONSOLE["MODEL"]``)."""
    agent_models: dict[str, str] = field(default_factory=dict)
    """Agent name → the name in ``MODELS`` of the model that agent uses instead."""


_REGISTRY: dict[str, WorkflowSpec] = {
    spec.name: spec
    for spec in [
        WorkflowSpec(
            name="email-review",
            title="Email draft review",
            kind=email_review.KIND,
            queue="support",
            build=email_review.build,
            input_schema=email_review.EmailReviewInput,
            description="An AI-drafted reply to a customer complaint, approved, rejected or revised by a person.",
            offline_policies={"draft_email": email_review.offline_draft},
            due_in_seconds=4 * 3600,
            on_expiry="escalate",
            escalate_to="support-leads",
        ),
        WorkflowSpec(
            name="vip-discount",
            title="VIP discount confirmation",
            kind=vip_discount.KIND,
            queue="sales",
            build=vip_discount.build,
            input_schema=vip_discount.VipDiscountInput,
            description="A customer-service agent proposes a VIP discount; a person confirms it.",
            offline_policies={"customer_service_agent": vip_discount.offline_agent},
            due_in_seconds=3600,
            on_expiry="timeout",
            bulk_approve=True,
        ),
        WorkflowSpec(
            name="refund-approval",
            title="Refund approval",
            kind=refund_approval.KIND,
            queue="finance",
            build=refund_approval.build,
            input_schema=refund_approval.RefundInput,
            description="Refunds above the policy limit need an approval; every refund needs a confirmation.",
            offline_policies={"refund_agent": refund_approval.offline_agent},
            due_in_seconds=24 * 3600,
            on_expiry="escalate",
            escalate_to="triage",
        ),
        WorkflowSpec(
            name="incident-triage",
            title="Incident triage",
            kind=incident_triage.KIND,
            queue="operations",
            build=incident_triage.build,
            input_schema=incident_triage.IncidentInput,
            description="A person triages an incident in a form generated from the interrupt's response schema.",
        ),
        WorkflowSpec(
            name="support-handoff",
            title="Support case handoff",
            kind=support_handoff.KIND,
            queue="support",
            build=support_handoff.build,
            input_schema=support_handoff.SupportInput,
            description="Triage, refund and order agents hand a case between them; refunds and replacements "
            "need a person's approval.",
            offline_policies={
                "triage_agent": support_handoff.offline_triage,
                "refunds_agent": support_handoff.offline_refund,
                "order_agent": support_handoff.offline_order,
            },
            chat=True,
        ),
    ]
}

if os.environ.get("REVIEWCONSOLE_TEST_WORKFLOWS") == "1":
    # Probe workflows for the scale-out and fault tests; never set in a real deployment.
    from . import testing

    _REGISTRY.update({spec.name: spec for spec in testing.specs()})


def get(name: str) -> WorkflowSpec:
    """The workflow registered as ``name``.

    Raises:
        UnknownWorkflowError: nothing is registered under that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownWorkflowError(f"No workflow named {name!r} is registered.") from None


def all_specs() -> list[WorkflowSpec]:
    """Every registered workflow, by name."""
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
