"""The demo workflows: a registrable workflow package (``WORKFLOWS`` below), on by default only in
the embedded and test settings (``REVIEWCONSOLE["WORKFLOWS"] = ["reviewconsole.demo"]``).

| name | module | what a person does |
|---|---|---|
| ``email-review`` | :mod:`.email_review` | approves, rejects or revises an AI-drafted reply |
| ``vip-discount`` | :mod:`.vip_discount` | confirms a discount an agent proposes |
| ``refund-approval`` | :mod:`.refund_approval` | approves a refund above $100 (two above $1,000), confirms it |
| ``incident-triage`` | :mod:`.incident_triage` | triages an incident in a generated form |
| ``support-handoff`` | :mod:`.support_handoff` | approves refunds and replacements of agents handing a chat on |

:mod:`.probes` holds the probe workflow of the fault tests, a module of its own (not listed here).
"""

from __future__ import annotations

from reviewconsole.workflows import WorkflowSpec, reason_required_above

from . import email_review, incident_triage, refund_approval, support_handoff, vip_discount

__all__ = ["WORKFLOWS"]

WORKFLOWS = [
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
        escalate_queues=("triage",),
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
        description="Refunds up to $100 are approved by policy, above $1,000 by two people; every refund "
        "needs a confirmation.",
        offline_policies={"refund_agent": refund_approval.offline_agent},
        policies=refund_approval.POLICIES,
        before_decision=(
            reason_required_above(
                "amount",
                refund_approval.REASON_LIMIT,
                functions=("ask_for_approval",),
                message=f"Approving a refund above ${refund_approval.REASON_LIMIT:,.0f} needs a reason: "
                "give one with the decision. Nothing was recorded.",
            ),
            refund_approval.same_order_no_larger_refund,
        ),
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
