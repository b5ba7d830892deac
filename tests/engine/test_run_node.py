"""``ctx.run_node``: children started at run time (ADK 2.13 ``Context.run_node``) keep our
guarantees: their interrupts reach the inbox, their state survives a pause and a fresh runner,
and a finished child never runs again when the caller reruns."""

from __future__ import annotations

from engine import START, Context, Event, InMemoryStore, RequestInput, Runner, SessionStatus, Workflow, node
from tests.engine.helpers import Counts, outputs, start


def _flow(counts: Counts) -> Workflow:
    def prepare(node_input: str):
        counts.hit("prepare")
        return Event(state={"prepared": node_input.upper()}, output=node_input.upper())

    @node(rerun_on_resume=True)
    def approve(ctx: Context, node_input: str):
        counts.hit("approve")
        answer = ctx.resume_inputs.get("approve")
        if answer is None:
            yield RequestInput(interrupt_id="approve", message=f"Approve {node_input}?")
            return
        yield f"{node_input} approved by {answer}"

    @node(rerun_on_resume=True)
    async def orchestrate(ctx: Context, node_input: str):
        counts.hit("orchestrate")
        first = await ctx.run_node(prepare, node_input)
        second = await ctx.run_node(approve, first)
        yield f"done: {second}"

    return Workflow("wf", edges=[(START, orchestrate)])


async def test_a_childs_interrupt_reaches_the_inbox_and_finished_children_never_run_again():
    counts = Counts()
    store = InMemoryStore()
    _, sid, result = await start(_flow(counts), "order", store=store)
    assert result.status == SessionStatus.WAITING
    [pending] = await store.pending_interrupts(sid)
    assert pending.id == "approve"
    assert pending.path == "wf@1/orchestrate@1/approve@1"
    assert result.session.state["prepared"] == "ORDER"  # the child's state write was stored

    fresh = Runner(_flow(counts), store)  # another process resumes from the checkpoint
    result = await fresh.resume(sid, {"approve": "ada"})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "done: ORDER approved by ada"
    assert counts["prepare"] == 1  # finished before the ask: never again
    assert counts["approve"] == 2  # asked, then reran with the answer (rerun_on_resume)
    assert counts["orchestrate"] == 2  # the caller reran (ADK: callers are rerun_on_resume)
    events = await store.list_events(sid)
    assert outputs(events)["wf@1/orchestrate@1/prepare@1"] == "ORDER"
    assert [e.node_info.path for e in events if e.output == "ORDER"] == ["wf@1/orchestrate@1/prepare@1"]


async def test_use_as_output_makes_the_childs_output_event_the_callers():
    def shout(node_input: str) -> str:
        return node_input.upper()

    @node(rerun_on_resume=True)
    async def orchestrate(ctx: Context, node_input: str) -> str:
        return await ctx.run_node(shout, node_input, use_as_output=True)

    def finish(node_input: str) -> str:
        return f"final: {node_input}"

    _, _, result = await start(Workflow("wf", edges=[(START, orchestrate, finish)]), "hi")
    assert result.output == "final: HI"
    carriers = [e for e in result.events if e.output == "HI"]
    assert [(e.node_info.path, e.node_info.output_for) for e in carriers] == [
        ("wf@1/orchestrate@1/shout@1", ["wf@1/orchestrate@1/shout@1", "wf@1/orchestrate@1"])
    ]


async def test_children_of_one_name_count_their_runs_and_a_failing_child_fails_the_caller():
    def twice(node_input: int) -> int:
        if node_input > 2:
            raise ValueError("too big")
        return node_input * 2

    @node
    async def loop(ctx: Context, node_input: int):
        value = node_input
        while True:
            value = await ctx.run_node(twice, value)

    _, _, result = await start(Workflow("wf", edges=[(START, loop)]), 1)
    assert result.status == SessionStatus.FAILED
    assert [p for p in outputs(result.events)] == ["wf@1/loop@1/twice@1", "wf@1/loop@1/twice@2"]
    assert "too big" in result.session.error["exception"]


async def test_a_composite_child_waits_on_a_tool_approval_and_resumes_without_a_repeated_model_call():
    from engine import FunctionCall, FunctionTool, LlmAgent, ScriptedModel

    counts = Counts()

    def refund(order: str) -> str:
        """Refund an order."""
        counts.hit("refund")
        return f"refunded {order}"

    model = ScriptedModel([FunctionCall(name="refund", args={"order": "A"}), "Refunded A."])
    agent = LlmAgent("clerk", model=model, tools=[FunctionTool(refund, require_confirmation=True)])

    @node(rerun_on_resume=True)
    async def orchestrate(ctx: Context, node_input: str):
        counts.hit("orchestrate")
        yield await ctx.run_node(agent, node_input, use_as_output=True)

    store = InMemoryStore()
    _, sid, result = await start(Workflow("wf", edges=[(START, orchestrate)]), "refund A", store=store)
    [approval] = result.interrupts
    assert approval.kind == "confirmation" and approval.path == "wf@1/orchestrate@1/clerk@1"
    result = await Runner(Workflow("wf", edges=[(START, orchestrate)]), store).resume(
        sid, {approval.id: {"confirmed": True}}
    )
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Refunded A."
    assert counts["refund"] == 1 and model.calls == 2
