"""HITL scenarios H24–H26, H28–H33 and H35–H37 of shared/cases/hitl-scenarios.md, at engine level.

(H27 and H34 are AG-UI door behaviour; their engine halves are tested where those are built.)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging

import pytest
from pydantic import BaseModel

from engine import (
    EFFECT_MAY_HAVE_RUN,
    START,
    AlreadyDecidedError,
    AnswerInvalidError,
    Content,
    Context,
    Decision,
    FunctionCall,
    FunctionTool,
    InMemoryStore,
    LlmAgent,
    Part,
    RequestInput,
    Runner,
    ScriptedModel,
    SessionStatus,
    ToolContext,
    UnknownInterruptError,
    Workflow,
    node,
)
from tests.engine.crash import Clock, Crashed, CrashingStore
from tests.engine.helpers import Counts, calls, outputs, responses, start


def call(name: str, **args) -> FunctionCall:
    return FunctionCall(name=name, args=args)


def one_turn(*items: FunctionCall) -> Content:
    return Content(role="model", parts=[Part(function_call=item) for item in items])


def digest(args: dict) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()


class Order(BaseModel):
    customer: str


def refund_tool(counts: Counts, ran_with: list[dict], *, limit: float | None = None) -> FunctionTool:
    def refund(order_id: str, amount: float, tool_context: ToolContext) -> dict:
        """Refund an order.

        Args:
            order_id: The order.
            amount: Euros.
        """
        args = {"order_id": order_id, "amount": amount}
        confirmation = tool_context.tool_confirmation or {}
        if isinstance(confirmation.get("payload"), dict):
            args = {**args, **confirmation["payload"]}  # the reviewer's edited arguments
        counts.hit(f"refund:{order_id}")
        ran_with.append(args)
        return {"refunded": args["order_id"], "amount": args["amount"]}

    return FunctionTool(refund, require_confirmation=True)


# -- H24 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fan_out", ["one_by_one", "at_once"])
async def test_h24_a_supervisor_fanning_out_children_reruns_with_its_own_input_and_keeps_every_result(fan_out):
    """``one_by_one``: ``beta`` asks and stops the supervisor before ``gamma`` starts. ``at_once``
    (``asyncio.gather``): ``gamma`` is still running when ``beta``'s wait reaches the supervisor,
    and finishes only then; the supervisor waits for it, so it never runs again (this failed
    before ``engine._dynamic.settle_children``: gamma's output was lost and it ran twice).
    After the answer the supervisor reruns with its own input; the finished children's outputs
    come from the checkpoint and the answer is ``beta``'s output."""
    counts = Counts()
    supervisor_inputs: list[str] = []
    beta_stopped_the_supervisor = asyncio.Event()

    async def work(node_input: str) -> str | RequestInput:
        counts.hit(f"work:{node_input}")
        if node_input == "beta":
            return RequestInput(message="Is beta fine?")
        if node_input == "gamma" and fan_out == "at_once" and counts["work:gamma"] == 1:
            await beta_stopped_the_supervisor.wait()
        counts.hit(f"done:{node_input}")
        return f"{node_input} done"

    @node(rerun_on_resume=True)
    async def supervisor(ctx: Context, node_input: str) -> dict[str, str]:
        supervisor_inputs.append(node_input)
        items = [item.strip() for item in node_input.split(",")]
        if fan_out == "one_by_one":
            return {item: await ctx.run_node(work, item, run_id=item) for item in items}
        try:
            results = await asyncio.gather(*(ctx.run_node(work, item, run_id=item) for item in items))
        except BaseException:
            beta_stopped_the_supervisor.set()
            raise
        return dict(zip(items, results, strict=True))

    app = Workflow("fan", edges=[(START, supervisor)])
    store = InMemoryStore()
    _, sid, paused = await start(app, "alpha, beta, gamma", store=store)
    assert paused.status == SessionStatus.WAITING
    [asked] = paused.interrupts
    assert asked.path == "fan@1/supervisor@1/work@beta"
    finished_before_the_answer = {"one_by_one": ["alpha"], "at_once": ["alpha", "gamma"]}[fan_out]
    assert list(outputs(await store.list_events(sid))) == [
        f"fan@1/supervisor@1/work@{item}" for item in finished_before_the_answer
    ]

    result = await Runner(app, store).resume(sid, {asked.id: "yes"})  # another worker resumes
    assert result.status == SessionStatus.COMPLETED
    assert result.output == {"alpha": "alpha done", "beta": "yes", "gamma": "gamma done"}
    assert supervisor_inputs == ["alpha, beta, gamma"] * 2  # its own input again, never the answer
    assert counts == {"work:alpha": 1, "done:alpha": 1, "work:beta": 1, "work:gamma": 1, "done:gamma": 1}
    assert await store.pending_interrupts(sid) == []
    events = await store.list_events(sid)
    # one output event per child that ran; beta's output is the answer (as for a graph node, the
    # answer event carries it), and the supervisor's output event holds all three
    assert sorted(
        (e.node_info.path, e.output) for e in events if e.output is not None and "/work@" in e.node_info.path
    ) == [
        ("fan@1/supervisor@1/work@alpha", "alpha done"),
        ("fan@1/supervisor@1/work@gamma", "gamma done"),
    ]
    assert [e.output for e in events if e.node_info.path == "fan@1/supervisor@1" and e.output] == [result.output]
    assert [r.response for r in responses(events, "adk_request_input")] == [{"result": "yes"}]


# -- H25 ------------------------------------------------------------------------------------


def _asking_child(kind: str, counts: Counts):
    """A child that asks once: its answer becomes its output (``plain``), or it reruns and
    returns the answer it reads from ``ctx.resume_inputs`` (``rerun_on_resume``)."""

    def ask(node_input: str) -> RequestInput:
        counts.hit("ask")
        return RequestInput(message=f"Round {node_input}?")

    @node(name="ask", rerun_on_resume=True)
    def ask_again(ctx: Context, node_input: str) -> str | RequestInput:
        counts.hit("ask")
        if ctx.resume_inputs:
            [answer] = ctx.resume_inputs.values()
            return str(answer)
        return RequestInput(message=f"Round {node_input}?")

    return ask if kind == "plain" else ask_again


@pytest.mark.parametrize("kind", ["plain", "rerun_on_resume"])
async def test_h25_a_child_asking_once_per_call_completes_with_each_answer_and_a_stale_reply_is_refused(kind):
    """Three answer/resume cycles, each on a fresh runner: one pending item per child call, each
    answer completes its call (no new id for it), and a reply to an answered id is refused."""
    counts = Counts()
    child = _asking_child(kind, counts)

    @node(rerun_on_resume=True)
    async def supervisor(ctx: Context, node_input: str) -> list[str]:
        counts.hit("supervisor")
        return [await ctx.run_node(child, str(round_)) for round_ in (1, 2, 3)]

    app = Workflow("rounds", edges=[(START, supervisor)])
    store = InMemoryStore()
    _, sid, result = await start(app, "go", store=store)
    answered: list[str] = []
    for round_, answer in enumerate(["first", "second", "third"], start=1):
        assert result.status == SessionStatus.WAITING
        [pending] = await store.pending_interrupts(sid)  # one item per child call, never more
        assert [r.id for r in result.interrupts] == [pending.id]
        assert pending.path == f"rounds@1/supervisor@1/ask@{round_}"
        assert pending.message == f"Round {round_}?"
        assert pending.id not in answered  # a new call asks under a new id
        for stale in answered:  # an id no longer pending is refused, never silently taken
            with pytest.raises(AlreadyDecidedError) as refused:
                await Runner(app, store).submit(sid, {stale: "late"}, decided_by="carol")
            assert refused.value.code == "interrupt_decided" and refused.value.details["decided_by"] == "bob"
        with pytest.raises(UnknownInterruptError):
            await Runner(app, store).submit(sid, {"adk-never-issued": "late"}, decided_by="carol")
        assert await store.take_answers(sid) == []  # the refused replies stored nothing
        result = await Runner(app, store).resume(sid, {pending.id: answer}, decided_by="bob")
        answered.append(pending.id)
        assert (await store.get_interrupt(sid, pending.id)).status == "resolved"

    assert result.status == SessionStatus.COMPLETED
    assert result.output == ["first", "second", "third"]
    assert await store.pending_interrupts(sid) == []  # the last answer raised no new id
    events = await store.list_events(sid)
    asks = [c.id for c in calls(events, "adk_request_input")]
    assert asks == answered  # each child call asked exactly once
    runs_per_call = 1 if kind == "plain" else 2  # a rerun_on_resume child runs again with its answer
    assert counts == {"ask": 3 * runs_per_call, "supervisor": 4}
    with pytest.raises(AlreadyDecidedError):
        await Runner(app, store).submit(sid, {answered[-1]: "late"}, decided_by="carol")


# -- H26 ------------------------------------------------------------------------------------


async def test_h26_a_worker_killed_after_a_side_effect_never_reruns_it_silently(caplog):
    """Steps whose result was committed never run again; the step in flight when the worker died
    runs again once, flagged: ``ctx.recovered`` is set and an ``effectMayHaveRun`` event is stored."""
    caplog.set_level(logging.CRITICAL, logger="engine")
    counts = Counts()
    flags: list[bool] = []
    store: CrashingStore

    def charge(node_input: str) -> str:
        counts.hit("charge")
        return f"charged {node_input}"

    def notify(ctx: Context, node_input: str) -> str:
        counts.hit("notify")
        flags.append(ctx.recovered)
        if counts["notify"] == 1:
            store.crash()  # killed after the side effect, before its result commits
        return f"notified: {node_input}"

    def done(node_input: str) -> str:
        counts.hit("done")
        return node_input

    clock = Clock()
    inner = InMemoryStore(clock=clock)
    store = CrashingStore(inner)
    flow = Workflow("pay", edges=[(START, charge, notify, done)])
    dying = Runner(flow, store, lease_ttl=10)
    session = await dying.create_session()
    with pytest.raises(Crashed):
        await dying.run(session.id, "o-1")
    clock.advance(11)
    result = await Runner(flow, inner).run_pending(session.id)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "notified: charged o-1"
    assert counts == {"charge": 1, "notify": 2, "done": 1}
    assert flags == [False, True]  # the second run knows the effect may have run
    flagged = [e.node_info.path for e in await inner.list_events(session.id) if e.custom_metadata]
    assert flagged == ["pay@1/notify@1"]
    assert all(e.custom_metadata == {EFFECT_MAY_HAVE_RUN: True} for e in result.events if e.custom_metadata)


# -- H28 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("nesting", ["node", "tool"])
async def test_h28_a_nested_workflow_asking_twice_restored_on_a_fresh_worker_opens_only_the_second(nesting):
    counts = Counts()

    def tier(node_input: Order) -> RequestInput:
        counts.hit("tier")
        return RequestInput(message=f"Tier for {node_input.customer}?")

    def amount(node_input: str) -> RequestInput:
        counts.hit("amount")
        return RequestInput(message=f"Amount for tier {node_input}?")

    def total(node_input: str) -> str:
        return f"amount {node_input}"

    inner = Workflow("discount", edges=[(START, tier, amount, total)], input_schema=Order, description="Discount.")
    if nesting == "node":
        app = Workflow("outer", edges=[(START, inner)])
        model = None
    else:
        model = ScriptedModel([call("discount", customer="c1"), "Discount set."])
        app = Workflow("outer", edges=[(START, LlmAgent("agent", model=model, tools=[inner]))])
    store = InMemoryStore()
    _, sid, first = await start(app, {"customer": "c1"} if nesting == "node" else "c1", store=store)
    [asked] = first.interrupts
    assert asked.message == "Tier for c1?"

    fresh = Runner(app, store)  # another worker: everything comes from the stored checkpoint
    second = await fresh.resume(sid, {asked.id: "gold"})
    assert second.status == SessionStatus.WAITING
    assert [r.message for r in second.interrupts] == ["Amount for tier gold?"]
    assert [r.message for r in await store.pending_interrupts(sid)] == ["Amount for tier gold?"]
    assert (await store.get_interrupt(sid, asked.id)).status == "resolved" or asked.id == second.interrupts[0].id

    third = Runner(app, store)
    result = await third.resume(sid, {second.interrupts[0].id: "20%"})
    assert result.status == SessionStatus.COMPLETED
    assert await store.pending_interrupts(sid) == []
    assert counts == {"tier": 1, "amount": 1}
    opened = [c for c in calls(await store.list_events(sid), "adk_request_input")]
    assert len(opened) == 2  # the answered question was never asked again


# -- H29 ------------------------------------------------------------------------------------


async def test_h29_an_approval_with_every_optional_field_runs_the_tool_once_and_a_stray_one_is_refused():
    counts, ran_with = Counts(), []
    model = ScriptedModel([call("refund", order_id="o-1", amount=50), "Refunded."])
    store = InMemoryStore()
    app = LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)])
    runner, sid, paused = await start(app, "refund o-1", store=store)
    [approval] = paused.interrupts
    worker = Runner(app, store)  # the decision is applied by another worker
    await runner.submit(
        sid,
        {approval.id: {"confirmed": True, "hint": "ok", "payload": None}},
        decided_by="bob",
        decisions={approval.id: Decision(kind="approve", reason="checked the receipt")},
    )
    result = await worker.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"refund:o-1": 1}
    with pytest.raises(AlreadyDecidedError) as again:
        await runner.submit(sid, {approval.id: {"confirmed": True}}, decided_by="carol")
    assert again.value.details["decided_by"] == "bob"
    with pytest.raises(UnknownInterruptError):
        await runner.submit(sid, {"adk-never-issued": {"confirmed": True}}, decided_by="bob")
    assert await store.pending_interrupts(sid) == []  # never a silent re-ask
    assert counts == {"refund:o-1": 1}


# -- H30 ------------------------------------------------------------------------------------


async def test_h30_a_rejected_refund_never_runs_and_the_model_gets_the_rejection():
    counts, ran_with = Counts(), []
    model = ScriptedModel([call("refund", order_id="o-1", amount=500), "Not refunded."])
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)]), "refund")
    [approval] = paused.interrupts
    result = await runner.resume(sid, {approval.id: {"confirmed": False}}, decided_by="bob")
    assert result.status == SessionStatus.COMPLETED
    assert counts["refund:o-1"] == 0 and ran_with == []
    last = model.requests[-1].contents[-1]
    [rejected] = [p.function_response for p in last.parts if p.function_response]
    assert rejected.name == "refund"
    assert "rejected" in rejected.response["error"]  # ADK 2.13's default decline wording


# -- H31 ------------------------------------------------------------------------------------


async def test_h31_three_gated_calls_approved_edited_and_rejected_get_one_result_each():
    counts, ran_with = Counts(), []
    model = ScriptedModel(
        [
            one_turn(
                call("refund", order_id="a", amount=10),
                call("refund", order_id="b", amount=20),
                call("refund", order_id="c", amount=30),
            ),
            "Two refunds done.",
        ]
    )
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)]), "go")
    by_order = {r.payload["args"]["order_id"]: r for r in paused.interrupts}
    assert sorted(by_order) == ["a", "b", "c"]
    decisions = {
        by_order["a"].id: {"confirmed": True},
        by_order["b"].id: {"confirmed": True, "payload": {"amount": 15}},
        by_order["c"].id: {"confirmed": False},
    }
    result = await runner.resume(sid, decisions, decided_by="bob")
    assert result.status == SessionStatus.COMPLETED
    assert model.calls == 2
    assert counts == {"refund:a": 1, "refund:b": 1}
    assert {"order_id": "b", "amount": 15} in ran_with
    final_request = model.requests[-1].contents
    call_ids = [c.id for c in calls(paused.events, "refund")]
    answered = [p.function_response.id for c in final_request for p in c.parts if p.function_response]
    real = [i for i in answered if i in call_ids]
    # the model saw the "confirmation required" placeholder per call, then exactly one result per call
    assert sorted(real) == sorted(call_ids * 2)
    last = final_request[-1]
    assert sorted(p.function_response.id for p in last.parts if p.function_response) == sorted(call_ids)


# -- H32 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        {"result": {"refunded": "o-1"}},  # shaped like the tool's result
        {"approved": True},  # shaped like another product's decision
        {"confirmed": "yes"},  # the right key with the wrong type
    ],
)
async def test_h32_an_approval_answered_with_the_wrong_shape_is_refused_and_stays_pending(payload):
    counts, ran_with = Counts(), []
    model = ScriptedModel([call("refund", order_id="o-1", amount=50), "Refunded."])
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)]), "go")
    [approval] = paused.interrupts
    with pytest.raises(AnswerInvalidError) as refused:
        await runner.submit(sid, {approval.id: payload})
    assert refused.value.details["errors"]
    assert [r.id for r in await runner.store.pending_interrupts(sid)] == [approval.id]
    assert await runner.store.take_answers(sid) == []
    assert counts == {}


# -- H33 ------------------------------------------------------------------------------------


async def test_h33_an_auto_denied_call_cannot_be_approved_and_an_approved_one_runs_with_its_arguments():
    """The policy (no approval offered over 1,000) lives in ``require_confirmation`` and the tool."""
    counts, ran_with = Counts(), []

    def refund(order_id: str, amount: float) -> dict:
        """Refund.

        Args:
            order_id: The order.
            amount: Euros.
        """
        if amount > 1000:
            return {"error": "Refunds over 1,000 are denied by policy."}
        counts.hit("refund")
        ran_with.append({"order_id": order_id, "amount": amount})
        return {"refunded": order_id}

    tool = FunctionTool(refund, require_confirmation=lambda args: args["amount"] <= 1000)
    model = ScriptedModel(
        [one_turn(call("refund", order_id="big", amount=5000), call("refund", order_id="small", amount=80)), "Done."]
    )
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[tool]), "refund both")
    [approval] = paused.interrupts  # only the call the policy lets a person approve
    big_call = next(c for c in calls(paused.events, "refund") if c.args["order_id"] == "big")
    for stray in (big_call.id, "adk-never-issued"):
        with pytest.raises(UnknownInterruptError):
            await runner.submit(sid, {stray: {"confirmed": True}}, decided_by="mallory")
    assert await runner.store.take_answers(sid) == []
    result = await runner.resume(sid, {approval.id: {"confirmed": True}}, decided_by="bob")
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"refund": 1}
    approved = (await runner.store.get_interrupt(sid, approval.id)).tool_call["args"]
    assert digest(ran_with[0]) == digest(approved)


# -- H35 ------------------------------------------------------------------------------------


async def test_h35_workflow_tool_workflow_asking_once_makes_one_item_and_one_answer_resolves_every_layer():
    counts = Counts()

    def ask(node_input: Order) -> RequestInput:
        counts.hit("ask")
        return RequestInput(message=f"Approve {node_input.customer}?")

    inner = Workflow("inner", edges=[(START, ask)], input_schema=Order, description="Approve a customer.")
    model = ScriptedModel([call("inner", customer="c1"), "Approved."])
    outer = Workflow("outer", edges=[(START, LlmAgent("agent", model=model, tools=[inner]))])
    runner, sid, paused = await start(outer, "approve c1")
    [item] = paused.interrupts
    assert await runner.store.pending_interrupts(sid) == paused.interrupts
    assert len(calls(await runner.store.list_events(sid), "adk_request_input")) == 1
    # every layer waits on the child's one interrupt
    root = (await runner.store.get_session(sid)).checkpoint["root"]
    agent_slot = root["child"]["nodes"]["agent"]
    [pending_call] = agent_slot["child"]["pending"].values()
    assert root["status"] == agent_slot["status"] == pending_call["slot"]["status"] == "waiting"
    assert root["interrupts"].keys() == agent_slot["interrupts"].keys() == {item.id}
    result = await runner.resume(sid, {item.id: "yes"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Approved."
    assert await runner.store.pending_interrupts(sid) == []
    assert (await runner.store.get_interrupt(sid, item.id)).status == "resolved"
    assert counts == {"ask": 1}


# -- H36 ------------------------------------------------------------------------------------


async def test_h36_an_identical_decision_sent_again_counts_once():
    counts, ran_with = Counts(), []
    model = ScriptedModel([call("refund", order_id="o-1", amount=50), "Refunded."])
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)]), "go")
    [approval] = paused.interrupts
    await runner.resume(sid, {approval.id: {"confirmed": True}}, decided_by="bob")
    for _ in range(2):
        with pytest.raises(AlreadyDecidedError):
            await runner.resume(sid, {approval.id: {"confirmed": True}}, decided_by="bob")
    events = await runner.store.list_events(sid)
    assert len([r for r in responses(events, "adk_request_confirmation")]) == 1
    assert counts == {"refund:o-1": 1}


# -- H37 ------------------------------------------------------------------------------------


async def test_h37_an_approval_with_edits_keeps_the_request_the_decision_and_the_call_that_ran():
    counts, ran_with = Counts(), []
    model = ScriptedModel([call("refund", order_id="o-1", amount=500), "Refunded.", "Anything else?"])
    runner, sid, paused = await start(LlmAgent("agent", model=model, tools=[refund_tool(counts, ran_with)]), "go")
    [approval] = paused.interrupts
    edit = {"confirmed": True, "payload": {"amount": 450}}
    await runner.resume(sid, {approval.id: edit}, decided_by="bob")
    record = await runner.store.get_interrupt(sid, approval.id)
    assert record.tool_call["args"] == {"order_id": "o-1", "amount": 500}  # as issued
    assert record.created_at <= record.decided_at
    assert (record.decided_by, record.response) == ("bob", {**edit, "args_digest": approval.args_digest})
    assert ran_with == [{"order_id": "o-1", "amount": 450}]  # the call that ran
    [ran] = [r for r in responses(await runner.store.list_events(sid), "refund") if "refunded" in r.response]
    assert ran.response == {"refunded": "o-1", "amount": 450}
    kept = (record.tool_call, record.response, record.decided_by, record.decided_at)
    await runner.run(sid, "thanks")  # later activity leaves the rows as they were
    again = await runner.store.get_interrupt(sid, approval.id)
    assert (again.tool_call, again.response, again.decided_by, again.decided_at) == kept
