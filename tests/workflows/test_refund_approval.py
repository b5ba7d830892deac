"""The refund sample: an approval (long-running; on the engine alone nothing decides it by policy), a
confirmed submission, an enforced decline."""

import pytest

from reviewconsole.demo import refund_approval


@pytest.fixture(autouse=True)
def ledger(monkeypatch):
    submitted = []
    monkeypatch.setattr(refund_approval, "submitted_refunds", submitted)
    return submitted


async def _start(runner_for, amount):
    runner = runner_for("refund-approval")
    session = await runner.create_session()
    result = await runner.run(session.id, {"order_id": "A1", "amount": amount, "reason": "arrived broken"})
    return runner, session, result


async def test_above_the_limit_an_approval_then_a_confirmation_then_one_refund(runner_for, ledger):
    runner, session, result = await _start(runner_for, 150)
    (approval,) = result.interrupts
    assert (approval.kind, approval.function_name) == ("long_running", "ask_for_approval")
    assert approval.payload["interim"]["policy_limit"] == refund_approval.POLICY_LIMIT
    assert approval.payload["args"] == {"order_id": "A1", "amount": 150.0, "reason": "arrived broken"}

    result = await runner.resume(session.id, {approval.id: {"status": "approved"}})
    (confirmation,) = result.interrupts
    assert confirmation.kind == "confirmation"
    assert confirmation.tool_call["name"] == "submit_refund"
    assert ledger == [], "nothing is submitted before the confirmation"

    done = await runner.resume(session.id, {confirmation.id: {"confirmed": True}})
    assert done.status == "completed"
    assert ledger == [{"order_id": "A1", "amount": 150.0}]
    assert done.output == "Your refund of $150.00 for order A1 has been submitted."


async def test_an_interim_update_keeps_the_approval_pending(runner_for):
    runner, session, result = await _start(runner_for, 150)
    approval = result.interrupts[0]
    update = await runner.resume(session.id, {approval.id: {"status": "pending", "note": "manager on leave"}})
    assert [i.id for i in update.interrupts] == [approval.id]


async def test_a_declined_submission_never_runs_the_tool(runner_for, ledger):
    runner, session, result = await _start(runner_for, 40)
    (approval,) = result.interrupts
    assert approval.function_name == "ask_for_approval", "every refund asks; the console's policy decides small ones"
    result = await runner.resume(session.id, {approval.id: {"status": "approved"}})
    (confirmation,) = result.interrupts
    done = await runner.resume(session.id, {confirmation.id: {"confirmed": False}})
    assert done.status == "completed"
    assert ledger == []
    assert done.output == "Your refund for order A1 was not submitted."


async def test_a_rejected_approval_submits_nothing(runner_for, ledger):
    runner, session, result = await _start(runner_for, 500)
    done = await runner.resume(session.id, {result.interrupts[0].id: {"status": "rejected"}})
    assert (done.status, ledger) == ("completed", [])
    assert done.output == "Your refund for order A1 was not approved."
