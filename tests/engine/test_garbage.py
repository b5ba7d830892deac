"""A run leaves no reference cycles behind: everything it made is freed by reference counting
when it ends, not by the garbage collector (whose passes grow with what a process holds)."""

from __future__ import annotations

import gc

from engine import START, Event, InMemoryStore, LlmAgent, OfflineModel, RequestInput, Runner, Workflow


def build() -> Workflow:
    def prepare(node_input):
        return Event(state={"topic": str(node_input)})

    def ask(draft: str):
        return RequestInput(message=f"Approve?\n{draft}")

    def handle(node_input):
        return Event(route="approved" if node_input == "approve" else "revise", state={"answer": node_input})

    def send():
        return Event(message="sent")

    writer = LlmAgent("writer", model=OfflineModel({"writer": lambda request: "a draft"}), output_key="draft")
    inner = Workflow("inner", edges=[(START, writer, ask)])
    return Workflow("outer", edges=[(START, prepare, inner, handle), (handle, {"approved": send, "revise": inner})])


async def test_a_start_and_a_resume_leave_no_cyclic_garbage():
    runner = Runner(build(), InMemoryStore())
    session = await runner.create_session()
    await runner.run(session.id, "a complaint")  # warm-up: caches filled before counting
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        session = await runner.create_session()
        paused = await runner.run(session.id, "a complaint")
        revised = await runner.resume(session.id, {paused.interrupts[0].id: "shorter"})
        done = await runner.resume(session.id, {revised.interrupts[0].id: "approve"})
        del paused, revised
        gc.collect()
        garbage = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert done.status == "completed"
    assert garbage == []
