"""Shared by the doors' tests of approvals bound to the exact call (engine/_digest.py).

The refund demo under its limit asks to confirm ``submit_refund(order_id, amount)``; the
``two_refunds`` fixture makes its offline model ask for two refunds in one model turn.
"""

from __future__ import annotations

import pytest

from engine import Content, FunctionCall, Part
from reviewconsole.demo import refund_approval
from reviewconsole.workflow_sessions.llm import built_model

SMALL = {"order_id": "A-1", "amount": 20, "reason": "late"}
"""A refund under the limit: it waits on the confirmation of submit_refund(A-1, 20.0)."""


@pytest.fixture
def refunds():
    """The refunds the demo's ``submit_refund`` made, emptied before and after the test."""
    refund_approval.submitted_refunds.clear()
    yield refund_approval.submitted_refunds
    refund_approval.submitted_refunds.clear()


def _two_refunds(request):
    if not any(c.function_responses() for c in request.contents):
        calls = [("A-1", 10.0), ("B-2", 20.0)]
        parts = [
            Part(function_call=FunctionCall(name="submit_refund", args={"order_id": o, "amount": a})) for o, a in calls
        ]
        return Content(role="model", parts=parts)
    return "Done."


@pytest.fixture
def two_refunds(monkeypatch):
    """The refund agent's offline model asks for two refunds (A-1, B-2) in one turn, then says "Done."."""
    monkeypatch.setitem(built_model("offline").policies, "refund_agent", _two_refunds)


def answers_to_people(session) -> int:
    """The answers stored for the session's interrupts, less the approval policy's (the demo
    refund's ``ask_for_approval`` is approved by policy under $100 before the confirmation waits)."""
    from reviewconsole.workflow_sessions.models import Answer, Interrupt

    by_policy = Interrupt.objects.filter(session=session, decided_by_label__startswith="policy").values("interrupt_id")
    return Answer.objects.filter(session=session).exclude(interrupt_id__in=by_policy).count()
