"""The purchase-order workflow package: register it with ``REVIEWCONSOLE_WORKFLOWS=purchase_order``
(with ``reviewconsole.demo`` beside it to keep the demo), or install it
(``pip install examples/purchase_order``): its entry point in the group ``reviewconsole.workflows``
registers it."""

from __future__ import annotations

from reviewconsole.workflows import WorkflowSpec

from . import workflow

__all__ = ["WORKFLOWS"]

WORKFLOWS = [
    WorkflowSpec(
        name="purchase-order",
        title="Purchase order approval",
        queue="purchasing",
        build=workflow.build,
        input_schema=workflow.PurchaseOrderInput,
        description=f"Orders above {workflow.AUTO_APPROVE_LIMIT:.0f} are approved by a person through a form.",
        due_in_seconds=2 * 24 * 3600,
    ),
]
