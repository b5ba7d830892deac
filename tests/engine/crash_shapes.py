"""The nested shapes the crash property test (``test_crash_property.py``) runs, and its driver.

Each shape is a workflow built around a :class:`Probe`. Every function step, tool and model turn
counts its executions in the probe (by node path, call id, or agent and turn) and checks, as it starts, that
the store does not hold its completion yet: a step whose completion is stored never runs again.
Models are :class:`~engine.OfflineModel` policies that answer from the conversation, so a model
turn made again after a crash answers as the first time did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from engine import (
    START,
    Content,
    Context,
    Event,
    FunctionCall,
    LlmAgent,
    LongRunningFunctionTool,
    OfflineModel,
    Part,
    RequestInput,
    Runner,
    RunResult,
    SessionStatus,
    Store,
    ToolContext,
    Workflow,
)


class Item(BaseModel):
    item: str


class Probe:
    """Counts executions and checks them against what ``store`` holds (set by the test)."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.reruns_after_completion: list[str] = []
        self.store: Store | None = None
        self.session_id = ""

    def model_turn(self, request: Any) -> None:
        """Count a model call, by agent and conversation length (one key per turn of a run)."""
        self.runs[f"model:{request.agent_name}:{len(request.contents)}"] += 1

    async def ran(self, key: str, done: Callable[[Event], bool]) -> None:
        """Count one execution of ``key``; note it if an event ``done`` accepts is stored already."""
        self.runs[key] += 1
        if self.store is not None and self.session_id:
            events = await self.store.list_events(self.session_id)
            if any(done(e) for e in events):
                self.reruns_after_completion.append(key)


def _finished_at(path: str) -> Callable[[Event], bool]:
    """A node run is complete once its output or its pause (a request for input) is stored."""

    def done(event: Event) -> bool:
        return event.node_info.path == path and (event.output is not None or bool(event.long_running_tool_ids))

    return done


def _responded(call_id: str) -> Callable[[Event], bool]:
    return lambda event: any(r.id == call_id for r in event.function_responses())


def _responses(request: Any) -> list[Any]:
    return [p.function_response for c in request.contents for p in c.parts if p.function_response]


def buy_workflow(probe: Probe, name: str = "buy") -> Workflow:
    """fetch → ask → finish, with an ``Item`` input: used as a tool."""

    async def fetch(ctx: Context, node_input: Item) -> dict[str, Any]:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return {"item": node_input.item}

    async def ask(ctx: Context, node_input: dict[str, Any]) -> RequestInput:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return RequestInput(interrupt_id="approve", message=f"Buy {node_input['item']}?")

    async def finish(ctx: Context, node_input: str) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return f"{name}: {node_input}"

    return Workflow(name, edges=[(START, fetch, ask, finish)], input_schema=Item, description="Buy one item.")


def _outer(probe: Probe, agent: LlmAgent) -> Workflow:
    async def prep(ctx: Context, node_input: str) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return node_input

    async def after(ctx: Context, node_input: str) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return f"summary: {node_input}"

    return Workflow("outer", edges=[(START, prep, agent, after)])


def _calls(*items: str, name: str = "buy") -> Content:
    parts = [Part(function_call=FunctionCall(name=name, args={"item": item})) for item in items]
    return Content(role="model", parts=parts)


def _buyer(probe: Probe, name: str, items: tuple[str, ...], tool: Any) -> LlmAgent:
    """An agent that calls ``tool`` once per item in one turn, then sums up the results."""

    def policy(request: Any) -> Any:
        probe.model_turn(request)
        done = _responses(request)
        if not done:
            return _calls(*items, name=tool.name)
        return "; ".join(str(r.response.get("result")) for r in done)

    return LlmAgent(name, model=OfflineModel({name: policy}), instruction="Buy what is asked.", tools=[tool])


def nested_tool(probe: Probe) -> Workflow:
    """A workflow used as an agent's tool, in a workflow."""
    return _outer(probe, _buyer(probe, "agent", ("tea",), buy_workflow(probe)))


def two_levels(probe: Probe) -> Workflow:
    """A workflow tool whose agent has a workflow tool of its own."""
    inner_agent = _buyer(probe, "inner_agent", ("tea",), buy_workflow(probe))

    async def wrap(ctx: Context, node_input: str) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return f"wrapped {node_input}"

    middle = Workflow(
        "middle", edges=[(START, inner_agent, wrap)], input_schema=Item, description="Buy through a helper."
    )
    return _outer(probe, _buyer(probe, "agent", ("tea",), middle))


def parallel_calls(probe: Probe) -> Workflow:
    """One model turn calls the workflow tool twice; both ask at once."""
    return _outer(probe, _buyer(probe, "agent", ("apple", "kiwi"), buy_workflow(probe)))


def long_running(probe: Probe) -> Workflow:
    """A long-running tool: it returns a ticket; its result comes later as an answer."""

    async def order(item: str, tool_context: ToolContext) -> dict[str, Any]:
        """Order an item; the supplier confirms later.

        Args:
            item: What to order.
        """
        await probe.ran(f"order:{tool_context.function_call_id}", _responded(tool_context.function_call_id))
        return {"status": "pending", "ticket": f"T-{item}"}

    def policy(request: Any) -> Any:
        probe.model_turn(request)
        done = _responses(request)
        if not done:
            return FunctionCall(name="order", args={"item": "tea"})
        return f"order is {done[-1].response.get('status')}"

    agent = LlmAgent(
        "agent", model=OfflineModel({"agent": policy}), instruction="Order.", tools=[LongRunningFunctionTool(order)]
    )
    return _outer(probe, agent)


def parallel_branches(probe: Probe) -> Workflow:
    """Two agents on parallel branches of a workflow, each with a workflow tool that asks; joined."""
    from engine import JoinNode

    left = _buyer(probe, "left", ("apple",), buy_workflow(probe, "buy_left"))
    right = _buyer(probe, "right", ("kiwi",), buy_workflow(probe, "buy_right"))

    async def prep(ctx: Context, node_input: str) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return node_input

    async def after(ctx: Context, node_input: dict[str, Any]) -> str:
        await probe.ran(ctx.node_path, _finished_at(ctx.node_path))
        return f"summary: {node_input['left']} | {node_input['right']}"

    return Workflow("outer", edges=[(START, prep, (left, right), JoinNode("both"), after)])


SHAPES: dict[str, Callable[[Probe], Workflow]] = {
    "parallel_branches": parallel_branches,
    "nested_tool": nested_tool,
    "two_levels": two_levels,
    "parallel_calls": parallel_calls,
    "long_running": long_running,
}


def answer_for(message: str | None) -> Any:
    """What the test's person (or supplier) answers: the same every time."""
    if message and message.startswith("Result of"):
        return {"status": "delivered"}
    return f"yes to {message}"


async def drive(runner: Runner, session_id: str) -> RunResult:
    """Play the host: start the session if it never started, run, answer one pending interrupt
    at a time (the first by message), until the session is no longer waiting on one.

    It looks at the stored session each time, so a fresh runner after a crash carries on."""
    record = await runner.store.get_session(session_id)
    if record.status == SessionStatus.NEW:
        await runner.start(session_id, "buy things")
    result = await runner.run_pending(session_id)
    while result.status == SessionStatus.WAITING:
        pending = sorted(await runner.store.pending_interrupts(session_id), key=lambda r: r.message or "")
        if not pending:
            break
        first = pending[0]
        await runner.submit(session_id, {first.id: answer_for(first.message)}, decided_by="ada")
        result = await runner.run_pending(session_id)
    return result
