"""HITL scenarios H2, H3, H4, H5, H6, H10, H11 and H12 of shared/cases/hitl-scenarios.md, at engine level."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    START,
    AmbiguousAnswerError,
    Commit,
    ConcurrencyError,
    Content,
    FunctionCall,
    FunctionTool,
    JoinNode,
    LlmAgent,
    LongRunningFunctionTool,
    OfflineModel,
    Part,
    RequestInput,
    Runner,
    ScriptedModel,
    SessionStatus,
    ToolContext,
    Workflow,
    node,
)
from reviewconsole.demo import email_review
from tests.engine.helpers import Counts, HookStore, calls, responses, start, texts


def call(name: str, **args) -> FunctionCall:
    return FunctionCall(name=name, args=args)


def calls_in_one_turn(*items: FunctionCall) -> Content:
    return Content(role="model", parts=[Part(function_call=item) for item in items])


# -- H2 -------------------------------------------------------------------------------------


async def test_h2_three_revisions_then_approve_on_the_email_review_workflow():
    model = OfflineModel({"draft_email": email_review.offline_draft})
    runner, sid, result = await start(email_review.build(model), {"complaint": "My phone broke."})
    for feedback in ("shorter", "more formal", "offer a refund"):
        [pending] = result.interrupts
        result = await runner.resume(sid, {pending.id: feedback})
        assert result.status == SessionStatus.WAITING
    [pending] = result.interrupts
    result = await runner.resume(sid, {pending.id: "approve"})
    assert result.status == SessionStatus.COMPLETED

    events = await runner.store.list_events(sid)
    drafts = [e for e in events if e.author == "draft_email"]
    assert len(drafts) == 4
    assert "we will refund you in full" in drafts[-1].text and "Revised after" not in drafts[-1].text
    assert len(calls(events, "adk_request_input")) == 4
    assert len({c.id for c in calls(events, "adk_request_input")}) == 4
    assert model.calls == 4
    assert texts(events).count(email_review.SENT) == 1
    assert len({e.id for e in events}) == len(events)
    shapes = [
        (e.author, e.node_info.path, e.text, str(e.function_calls()), str(e.function_responses())) for e in events
    ]
    assert len(set(shapes)) == len(shapes), "no duplicate events in the timeline"


# -- H3 -------------------------------------------------------------------------------------


async def test_h3_one_turn_two_tools_needing_approval_approve_one_reject_the_other():
    runs: list[tuple[str, dict | None]] = []

    def refund(order: str, tool_context: ToolContext) -> dict:
        """Refund an order."""
        runs.append((order, tool_context.tool_confirmation))
        return {"refunded": order}

    model = ScriptedModel(
        [calls_in_one_turn(call("refund", order="A"), call("refund", order="B")), "A refunded.", "B declined."]
    )
    agent = LlmAgent("agent", model=model, tools=[FunctionTool(refund, require_confirmation=True)])
    runner, sid, result = await start(agent, "refund A and B")
    items = {r.tool_call["args"]["order"]: r for r in result.interrupts}
    assert set(items) == {"A", "B"}
    assert items["A"].id != items["B"].id
    assert runs == []

    result = await runner.resume(sid, {items["A"].id: {"confirmed": True, "payload": {"note": "for A"}}})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == [items["B"].id]
    result = await runner.resume(sid, {items["B"].id: {"confirmed": False}})
    assert result.status == SessionStatus.COMPLETED
    assert runs == [("A", {"confirmed": True, "payload": {"note": "for A"}})]  # A once, B never
    final = [r.response for r in responses(await runner.store.list_events(sid), "refund")][-2:]
    assert final == [{"refunded": "A"}, {"error": "This tool call is rejected."}]


# -- H4 -------------------------------------------------------------------------------------


async def test_h4_two_branches_ask_at_once_deciding_both_joins_once():
    counts = Counts()

    def legal(node_input):
        return RequestInput(interrupt_id="legal", message="Legal OK?")

    def finance(node_input):
        return RequestInput(interrupt_id="finance", message="Finance OK?")

    def decide(node_input: dict):
        counts.hit("decide")
        return f"legal={node_input['legal']} finance={node_input['finance']}"

    wf = Workflow("wf", edges=[(START, (legal, finance), JoinNode("both"), decide)])
    runner, sid, result = await start(wf, "contract")
    assert sorted(r.id for r in result.interrupts) == ["finance", "legal"]
    result = await runner.resume(sid, {"legal": "yes"})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == ["finance"]
    assert counts["decide"] == 0
    result = await runner.resume(sid, {"finance": "no"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "legal=yes finance=no"
    assert counts["decide"] == 1


# -- H5 -------------------------------------------------------------------------------------


async def test_h5_an_answer_naming_no_interrupt_while_two_are_pending_is_refused():
    def one():
        return RequestInput(interrupt_id="one")

    def two():
        return RequestInput(interrupt_id="two")

    runner, sid, _ = await start(Workflow("wf", edges=[(START, (one, two))]))
    before = (await runner.store.get_session(sid)).version, len(await runner.store.list_events(sid))
    with pytest.raises(AmbiguousAnswerError) as info:
        await runner.submit(sid, {None: "approve"})
    assert info.value.to_dict()["pending"] == ["one", "two"]
    after = (await runner.store.get_session(sid)).version, len(await runner.store.list_events(sid))
    assert after == before
    assert len(await runner.store.pending_interrupts(sid)) == 2


# -- H6 -------------------------------------------------------------------------------------


class Order(BaseModel):
    customer: str


@pytest.mark.parametrize("interrupt_id", ["confirm", None])
async def test_h6_a_workflow_tool_asks_twice_and_the_second_item_is_never_pre_answered(interrupt_id):
    """With an explicit id both questions use it in turn (ADK's wire form); without, each gets its own."""
    counts = Counts()

    def confirm_tier(node_input: Order):
        counts.hit("tier")
        return RequestInput(interrupt_id=interrupt_id, message=f"Confirm tier of {node_input.customer}?")

    def confirm_amount(node_input):
        counts.hit("amount")
        return RequestInput(interrupt_id=interrupt_id, message=f"Confirm amount (tier {node_input})?")

    def result_of(node_input):
        return f"amount {node_input}"

    discount = Workflow("discount", edges=[(START, confirm_tier, confirm_amount, result_of)], input_schema=Order)
    model = ScriptedModel([call("discount", customer="c1"), "Done."])
    runner, sid, result = await start(LlmAgent("agent", model=model, tools=[discount]), "discount for c1")
    [tier] = result.interrupts
    assert tier.message == "Confirm tier of c1?"
    result = await runner.resume(sid, {tier.id: "gold"})
    assert result.status == SessionStatus.WAITING
    [amount] = result.interrupts
    assert amount.message == "Confirm amount (tier gold)?"
    assert (amount.status, amount.response, amount.decided_by) == ("pending", None, None)
    assert amount.path.endswith("/confirm_amount@1") and tier.path.endswith("/confirm_tier@1")
    assert (amount.id == tier.id) == (interrupt_id is not None)
    assert counts == {"tier": 1, "amount": 1}
    result = await runner.resume(sid, {amount.id: "20%"})
    assert result.status == SessionStatus.COMPLETED
    assert responses(result.events, "discount")[0].response == {"result": "amount 20%"}
    assert counts == {"tier": 1, "amount": 1}


# -- H10 ------------------------------------------------------------------------------------


async def test_h10_two_agents_in_sequence_each_confirm_a_tool():
    counts = Counts()

    def book_flight() -> str:
        """Book the flight."""
        counts.hit("flight")
        return "flight booked"

    def book_hotel() -> str:
        """Book the hotel."""
        counts.hit("hotel")
        return "hotel booked"

    first_model = ScriptedModel([call("book_flight"), "Flight done."])
    second_model = ScriptedModel([call("book_hotel"), "Hotel done."])
    first = LlmAgent("flights", model=first_model, tools=[FunctionTool(book_flight, require_confirmation=True)])
    second = LlmAgent("hotels", model=second_model, tools=[FunctionTool(book_hotel, require_confirmation=True)])
    wf = Workflow("trip", edges=[(START, first, second)])
    runner, sid, result = await start(wf, "plan a trip")
    [flight] = result.interrupts
    assert (first_model.calls, second_model.calls) == (1, 0)
    result = await runner.resume(sid, {flight.id: True})
    [hotel] = result.interrupts
    assert hotel.path == "trip@1/hotels@1"
    assert (first_model.calls, second_model.calls) == (2, 1)
    result = await runner.resume(sid, {hotel.id: True})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Hotel done."
    assert (first_model.calls, second_model.calls) == (2, 2)
    assert counts == {"flight": 1, "hotel": 1}
    events = await runner.store.list_events(sid)
    assert [p for p in dict.fromkeys(e.node_info.path for e in events if e.node_info.path)] == [
        "trip@1/flights@1",
        "trip@1/hotels@1",
    ]


# -- H11 ------------------------------------------------------------------------------------


async def test_h11_an_approval_gated_tool_inside_a_node_used_as_a_tool():
    counts = Counts()

    def submit_refund(order: str) -> dict:
        """Submit the refund."""
        counts.hit("submit")
        return {"submitted": order}

    inner_model = ScriptedModel([call("submit_refund", order="o-9"), "Refund submitted."])
    clerk = LlmAgent("clerk", model=inner_model, tools=[FunctionTool(submit_refund, require_confirmation=True)])
    refunds = Workflow("refunds", edges=[(START, clerk)], input_schema=Order)
    outer_model = ScriptedModel([call("refunds", customer="c1"), "All done."])
    runner, sid, result = await start(LlmAgent("desk", model=outer_model, tools=[refunds]), "refund c1")
    [approval] = result.interrupts
    [tool_call] = calls(result.events, "refunds")
    assert approval.branch == f"refunds@{tool_call.id}"
    result = await runner.resume(sid, {approval.id: {"confirmed": True}})
    assert result.status == SessionStatus.COMPLETED
    assert counts["submit"] == 1
    ran = next(e for e in result.events if responses([e], "submit_refund"))
    assert ran.branch == f"refunds@{tool_call.id}"  # the tool ran on the child's sub-branch
    assert responses(result.events, "refunds")[0].response == {"result": "Refund submitted."}
    assert result.output == "All done."
    assert texts(result.events)[-1] == "All done."
    assert (inner_model.calls, outer_model.calls) == (2, 2)


async def test_h11_a_confirmation_gated_node_used_as_a_tool():
    counts = Counts()

    @node(require_confirmation=True)
    def wipe(disk: str) -> str:
        counts.hit("wipe")
        return f"wiped {disk}"

    model = ScriptedModel([call("wipe", disk="d1"), "Wiped."])
    runner, sid, result = await start(LlmAgent("ops", model=model, tools=[wipe]), "wipe d1")
    [approval] = result.interrupts
    assert approval.payload["args"] == {"disk": "d1"}
    result = await runner.resume(sid, {approval.id: True})
    assert counts["wipe"] == 1
    assert responses(result.events, "wipe")[0].response == {"result": "wiped d1"}


# -- H12: a long-running tool's result posted right after the pause commits -----------------


async def test_h12_a_long_running_result_posted_right_after_the_pause_is_applied_once():
    counts = Counts()

    def approve(amount: int) -> dict:
        """Ask a manager to approve."""
        counts.hit("approve")
        return {"status": "pending", "ticket": "T-1"}

    model = ScriptedModel([FunctionCall(name="approve", args={"amount": 150}), "Sent for approval.", "Approved!"])
    store = HookStore()
    runner = Runner(LlmAgent("agent", model=model, tools=[LongRunningFunctionTool(approve)]), store)
    session = await runner.create_session()
    versions: list[int] = []

    async def post_result():
        record = await store.get_session(session.id)
        versions.append(record.version)
        [pending] = await store.pending_interrupts(session.id)
        await runner.submit(session.id, {pending.id: {"status": "approved"}}, decided_by="manager-api")
        await runner.run_pending(session.id)

    store.on_pause = post_result
    result = await runner.run(session.id, "reimburse 150")
    assert result.status == SessionStatus.COMPLETED
    assert counts["approve"] == 1  # the tool never ran again
    assert model.calls == 3  # one turn for the pending result, one for the real one
    events = await store.list_events(session.id)
    [fc] = calls(events, "approve")
    assert [r.response for r in responses(events, "approve")] == [
        {"status": "pending", "ticket": "T-1"},
        {"status": "approved"},
    ]
    assert all(r.id == fc.id for r in responses(events, "approve"))
    # concurrency is checked with the version counter: a writer holding the paused version loses
    record = await store.get_session(session.id)
    assert record.version > versions[0]
    with pytest.raises(ConcurrencyError):
        await store.commit(
            session.id, Commit(events=[], checkpoint=None, status=SessionStatus.WAITING, expected_version=versions[0])
        )
