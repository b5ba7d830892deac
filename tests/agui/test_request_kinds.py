"""AG-UI refuses a ``resolved`` payload its request kind does not support (issue 17)."""

from __future__ import annotations

import pytest

from engine import FunctionCall
from reviewconsole.inbox.models import Item
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)

VIP_TURNS = [
    FunctionCall(name="customer_lookup_workflow", args={"user_id": "c123"}),
    FunctionCall(name="calculate_discount", args={"tier": "Verified VIP Member", "user_id": "c123"}),
    "Ada gets 20% off.",
]


async def test_feedback_to_a_vip_confirmation_is_action_not_supported(agui, scripted):
    scripted("vip-discount", VIP_TURNS)
    first = well_formed(await agui("vip-discount", body("t-vip-kind", '{"customer_id": "c123"}')))
    [interrupt] = first.interrupts
    refused = well_formed(await agui("vip-discount", body("t-vip-kind", resume=resume(interrupt, "make it 25%"))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "action_not_supported"
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()
