"""Approval policies at the AG-UI door: a four-eyes approval is refused (two people approve in the inbox)."""

from __future__ import annotations

import pytest

from engine import FunctionCall
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_four_eyes_approval_is_refused_and_stores_nothing(agui, scripted):
    from asgiref.sync import sync_to_async

    from reviewconsole.workflow_sessions.models import Answer

    args = {"order_id": "o-4", "amount": 4000.0, "reason": "lost"}
    scripted("refund-approval", [FunctionCall(name="ask_for_approval", args=args), "Waiting for two managers."])
    first = well_formed(
        await agui("refund-approval", body("t-4eyes", '{"order_id": "o-4", "amount": 4000, "reason": "lost"}'))
    )
    [waiting] = first.interrupts
    refused = well_formed(
        await agui("refund-approval", body("t-4eyes", resume=resume(waiting, {"status": "approved"})))
    )
    assert (refused.last["type"], refused.last["code"]) == ("RUN_ERROR", "four_eyes_required")
    assert not await sync_to_async(Answer.objects.filter(interrupt_id=waiting["id"]).exists)()
