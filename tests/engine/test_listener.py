"""The run listener: events, streamed partial events and node starts and ends, in order."""

from __future__ import annotations

from engine import (
    START,
    FunctionCall,
    LlmAgent,
    NodeStatus,
    RequestInput,
    Runner,
    ScriptedModel,
    Workflow,
    node,
)


class Recorder:
    """A RunListener that notes everything it is told."""

    def __init__(self) -> None:
        self.log: list[tuple[str, ...]] = []

    def on_event(self, event):
        self.log.append(("event", event.node_info.path, "partial" if event.partial else "full"))

    def on_node_start(self, path, name):
        self.log.append(("start", path, name))

    def on_node_end(self, path, status):
        self.log.append(("end", path, status))

    def nodes(self):
        return [entry for entry in self.log if entry[0] in ("start", "end")]


def ask() -> RequestInput:
    return RequestInput(interrupt_id="go", message="Go?")


def done(node_input: str) -> str:
    return f"got {node_input}"


async def test_each_node_run_starts_and_ends_and_a_pause_ends_as_waiting():
    runner = Runner(Workflow("flow", edges=[(START, ask, done)]))
    session = await runner.create_session()
    first = Recorder()
    await runner.run(session.id, "x", listener=first)
    assert first.nodes() == [
        ("start", "flow@1", "flow"),
        ("start", "flow@1/ask@1", "ask"),
        ("end", "flow@1/ask@1", NodeStatus.WAITING),
        ("end", "flow@1", NodeStatus.WAITING),
    ]
    second = Recorder()
    await runner.resume(session.id, {"go": "yes"}, listener=second)
    assert second.nodes() == [
        ("start", "flow@1", "flow"),
        ("start", "flow@1/ask@1", "ask"),
        ("end", "flow@1/ask@1", NodeStatus.COMPLETED),
        ("start", "flow@1/done@1", "done"),
        ("end", "flow@1/done@1", NodeStatus.COMPLETED),
        ("end", "flow@1", NodeStatus.COMPLETED),
    ]
    assert ("event", "flow@1/done@1", "full") in second.log


async def test_a_node_run_as_a_tool_is_reported_under_its_agent():
    @node
    def lookup(user_id: str) -> dict:
        return {"tier": "gold", "user_id": user_id}

    model = ScriptedModel([FunctionCall(name="lookup", args={"user_id": "u1"}), "Gold."], stream=True)
    agent = LlmAgent("helper", model=model, tools=[lookup])
    runner = Runner(agent)
    session = await runner.create_session()
    seen = Recorder()
    result = await runner.run(session.id, "tier?", listener=seen)
    assert result.output == "Gold."
    call_id = next(c.id for e in result.events for c in e.function_calls())
    assert seen.nodes() == [
        ("start", "helper@1", "helper"),
        ("start", f"helper@1/lookup@{call_id}", "lookup"),
        ("end", f"helper@1/lookup@{call_id}", NodeStatus.COMPLETED),
        ("end", "helper@1", NodeStatus.COMPLETED),
    ]
    assert ("event", "helper@1", "partial") in seen.log


async def test_a_failing_sibling_cancels_the_others_and_each_is_reported():
    import asyncio

    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    def boom() -> str:
        raise RuntimeError("no")

    runner = Runner(Workflow("fan", edges=[(START, (slow, boom))]))
    session = await runner.create_session()
    seen = Recorder()
    result = await runner.run(session.id, "x", listener=seen)
    assert result.status == "failed"
    ends = {entry[1]: entry[2] for entry in seen.nodes() if entry[0] == "end"}
    assert ends == {"fan@1/boom@1": "failed", "fan@1/slow@1": "cancelled", "fan@1": "failed"}


async def test_the_callable_form_still_receives_events_only():
    runner = Runner(Workflow("flow", edges=[(START, done)]))
    session = await runner.create_session()
    seen = []
    await runner.run(session.id, "x", listener=seen.append)
    assert [e.output for e in seen] == ["got x"]
