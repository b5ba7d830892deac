"""The example package's workflow on the engine alone: auto-approval, the approval form, rejection."""

from __future__ import annotations

import pytest

from engine import AnswerInvalidError, InMemoryStore, Runner, WorkflowDataError

SMALL = {
    "po_number": "PO-1",
    "requester": "Ana",
    "supplier": "Acme",
    "lines": [{"description": "Pens", "quantity": 10, "unit_price": 2.5}],
}
LARGE = {
    "po_number": "PO-2",
    "requester": "Ben",
    "supplier": "Acme",
    "currency": "EUR",
    "lines": [
        {"description": "Laptop", "quantity": 2, "unit_price": 1200},
        {"description": "Dock", "quantity": 2, "unit_price": 150},
    ],
}


@pytest.fixture
def runner(example_on_path):
    from purchase_order import workflow

    return Runner(workflow.build(None), InMemoryStore(), app_name="purchase-order")


async def _messages(runner, session_id):
    return [e.content.text for e in await runner.store.list_events(session_id) if e.content and e.content.text]


async def test_an_order_up_to_the_limit_is_placed_without_a_person(runner):
    session = await runner.create_session()
    result = await runner.run(session.id, SMALL)
    assert result.interrupts == []
    assert (await runner.store.get_session(session.id)).state["outcome"] == "placed"
    assert "Purchase order PO-1 placed with Acme: 25.00 USD, auto-approved." in await _messages(runner, session.id)


async def test_a_larger_order_asks_for_the_approval_form_and_is_placed_on_approve(runner):
    session = await runner.create_session()
    result = await runner.run(session.id, LARGE)
    [interrupt] = result.interrupts
    assert interrupt.payload["total"] == 2700.0
    assert interrupt.response_schema["properties"]["decision"]["enum"] == ["approve", "reject"]
    assert interrupt.metadata["kind"] == "purchase_order"
    await runner.resume(session.id, {interrupt.id: {"decision": "approve", "cost_center": "OP-1234", "expedite": True}})
    stored = await runner.store.get_session(session.id)
    assert stored.state["outcome"] == "placed"
    assert "Purchase order PO-2 placed with Acme (expedited): 2700.00 EUR, approved, charged to OP-1234." in (
        await _messages(runner, session.id)
    )


async def test_a_rejection_tells_the_requester_why(runner):
    session = await runner.create_session()
    [interrupt] = (await runner.run(session.id, LARGE)).interrupts
    answer = {"decision": "reject", "cost_center": "OP-1234", "comment": "Use the spare laptops."}
    await runner.resume(session.id, {interrupt.id: answer})
    assert (await runner.store.get_session(session.id)).state["outcome"] == "rejected"
    assert "Purchase order PO-2 rejected: Use the spare laptops." in await _messages(runner, session.id)


async def test_an_answer_outside_the_form_is_refused_and_the_order_still_waits(runner):
    session = await runner.create_session()
    [interrupt] = (await runner.run(session.id, LARGE)).interrupts
    with pytest.raises(AnswerInvalidError):
        await runner.resume(session.id, {interrupt.id: {"decision": "approve", "cost_center": "nope"}})
    assert [i.id for i in await runner.store.pending_interrupts(session.id)] == [interrupt.id]


async def test_an_order_without_lines_is_refused(runner):
    session = await runner.create_session()
    with pytest.raises(WorkflowDataError):
        await runner.run(session.id, {**SMALL, "lines": []})
