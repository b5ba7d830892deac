"""The support handoff sample on the engine alone, driven by its offline policies."""

from __future__ import annotations

from engine import OfflineModel, Runner
from reviewconsole.demo import support_handoff
from reviewconsole.workflows import get


def offline_runner() -> Runner:
    spec = get("support-handoff")
    return Runner(spec.build(None), model=OfflineModel(spec.offline_policies))


async def test_refund_then_replacement_then_triage_closes_the_case():
    support_handoff.submitted.clear()
    runner = offline_runner()
    session = await runner.create_session()
    result = await runner.run(session.id, {"message": "Order o-1001 arrived damaged, I want a refund"})
    [refund] = result.interrupts
    assert (refund.kind, refund.tool_call["name"]) == ("confirmation", "submit_refund")
    result = await runner.resume(session.id, {refund.id: {"confirmed": True}})
    [replacement] = result.interrupts
    assert replacement.tool_call["name"] == "submit_replacement"
    result = await runner.resume(session.id, {replacement.id: {"confirmed": True}})
    assert result.status == "completed"
    assert support_handoff.is_case_complete(result.output)
    assert [s["kind"] for s in support_handoff.submitted] == ["refund", "replacement"]
    paths = list(dict.fromkeys(e.node_info.path for e in result.events if e.node_info.path))
    assert paths == ["support@1/order_agent@1", "support@1/triage_agent@2"]


async def test_a_declined_refund_is_never_submitted():
    support_handoff.submitted.clear()
    runner = offline_runner()
    session = await runner.create_session()
    result = await runner.run(session.id, "I want my money back for o-1002")
    [refund] = result.interrupts
    result = await runner.resume(session.id, {refund.id: {"confirmed": False}})
    [replacement] = result.interrupts
    result = await runner.resume(session.id, {replacement.id: {"confirmed": False}})
    assert result.status == "completed"
    assert support_handoff.submitted == []


async def test_a_vague_message_waits_for_the_customers_next_one():
    runner = offline_runner()
    session = await runner.create_session()
    result = await runner.run(session.id, "hello?")
    assert result.status == "waiting" and result.interrupts == []
    await runner.start(session.id, "my order o-1002 is late")
    result = await runner.run_pending(session.id)
    assert [i.tool_call["name"] for i in result.interrupts] == ["submit_replacement"]


async def test_the_refund_message_names_the_amount_that_ran():
    """Found in a new user's trial: after an edited confirmation the agent named what it proposed."""
    support_handoff.submitted.clear()
    runner = offline_runner()
    session = await runner.create_session()
    result = await runner.run(session.id, "Order o-1001 arrived damaged, I want a refund")
    [refund] = result.interrupts
    edited = {"order_id": "o-1001", "amount": 100.0}
    result = await runner.resume(session.id, {refund.id: {"confirmed": True, "args": edited}})
    said = [e.content.text for e in result.events if e.content is not None and e.content.text]
    assert "Your refund of $100.00 for o-1001 is on its way." in said
    assert support_handoff.submitted[0] == {"kind": "refund", **edited}
