"""Child nodes started at run time: ``await ctx.run_node(node, node_input)`` (ADK 2.13
``agents/context.py`` ``run_node``, ``workflow/_dynamic_node_scheduler.py``).

A node's code may run another node (a function, an agent, a workflow) as its child
``<path>/<child>@<n>`` and await its output; ``n`` counts the runs of that child's name in this
activation (or is the ``run_id`` given). With ``use_as_output=True`` the child's output is the
caller's output: the child's output event lists the caller's path in ``outputFor`` and the
caller writes no output event of its own.

Our guarantees hold for children as for graph nodes: the activation's checkpoint records every
child that finished (with its output) and every child that waits (with its slot), so a
``rerun_on_resume`` caller that runs again after a pause or a crash gets the finished children's
outputs back without running them again, and a waiting child's interrupts reach the inbox and its
answers resume it. A child that waits stops the caller (it waits too, on the child's interrupts);
ADK's ``raise_on_wait=False`` (``None`` returned to the caller) is not offered.

Children may run at once (``asyncio.gather`` over ``run_node`` calls). When one of them waits,
``gather`` hands its ``ChildWaiting`` to the caller while the others still run: the caller then
settles (:func:`settle_children`) before it waits, so the siblings' outputs (or interrupts) reach
its checkpoint and a sibling that finished never runs again on the rerun (scenario H24).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ._node import BaseNode, as_node
from ._slot import COMPLETE, RUN, Slot

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["ChildWaiting", "dynamic_snapshot", "dynamic_wires", "run_node", "settle_children"]


class ChildWaiting(BaseException):
    """Raised in the caller when a child started with ``run_node`` waits; the caller then waits.

    A ``BaseException`` so that a node's own ``except Exception`` does not swallow it.
    """


def dynamic_snapshot(records: dict[str, Any]) -> dict[str, Any]:
    """The children's records as JSON: ``{"output": v}`` for finished ones, ``{"slot": ...}`` else."""
    out: dict[str, Any] = {}
    for key, record in records.items():
        if isinstance(record, tuple):
            node, slot = record
            out[key] = {"slot": slot.to_json(node)}
        else:
            out[key] = record
    return out


def dynamic_wires(records: Any) -> set[str]:
    """The wire ids the waiting children of a checkpoint wait on."""
    if not isinstance(records, dict):
        return set()
    return {wire for r in records.values() if isinstance(r, dict) for wire in r.get("slot", {}).get("interrupts", {})}


async def run_node(
    ctx: Context, node: Any, node_input: Any = None, *, use_as_output: bool = False, run_id: str | None = None
) -> Any:
    """Run ``node`` as a child of ``ctx``'s activation and return its output (see the module docstring).

    Raises:
        ChildWaiting: the child waits on interrupts (the caller stops and waits with it), or the
            caller waits already (a sibling asked), so the child is left for the caller's rerun.
        Exception: the child failed (its error).
    """
    if ctx.dynamic_stopped:
        raise ChildWaiting
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    ctx.dynamic_running.add(done)
    try:
        return await _run_child(ctx, node, node_input, use_as_output=use_as_output, run_id=run_id)
    finally:
        ctx.dynamic_running.discard(done)
        done.set_result(None)


async def settle_children(ctx: Context) -> None:
    """Stop ``ctx`` starting children and wait until those still running have returned or raised.

    Called when ``ctx``'s node waits on a child: siblings started at once (``asyncio.gather``)
    may still run, and their outcome belongs in the caller's checkpoint.
    """
    ctx.dynamic_stopped = True
    while ctx.dynamic_running:
        await asyncio.wait(set(ctx.dynamic_running))


async def _run_child(ctx: Context, node: Any, node_input: Any, *, use_as_output: bool, run_id: str | None) -> Any:
    child_node: BaseNode = as_node(node)
    name = child_node.name
    count = ctx.dynamic_counts.get(name, 0) + 1
    ctx.dynamic_counts[name] = count
    run = run_id or str(count)
    key = f"{name}@{run}"
    if use_as_output:
        ctx.output_claimed = True
    record = ctx.dynamic.get(key)
    if isinstance(record, dict) and "output" in record:
        return record["output"]
    fresh = True
    if isinstance(record, dict) and "slot" in record:
        slot = Slot.from_json(record["slot"])
        if slot.status == "waiting":
            verdict = slot.deliver(child_node, ctx.dynamic_answers, [], ctx.session)
            if verdict == COMPLETE:
                output = slot.answer_output()
                ctx.dynamic[key] = {"output": output}
                return output
            if verdict != RUN:
                ctx.interrupt_ids.extend(w for w in slot.interrupts if w not in ctx.interrupt_ids)
                raise ChildWaiting
        fresh = slot.child is None
    else:
        slot = Slot(status="running", run=run, input=node_input, branch=ctx.branch)
    child = ctx.child(
        child_node,
        run_id=run,
        node_input=slot.input,
        branch=slot.branch,
        author=child_node.name if child_node.authors_own_events else ctx.author,
        output_for=[ctx.node_path, *ctx.output_for] if use_as_output else None,
    )
    slot.bind(child, child_node, fresh=fresh)
    ctx.dynamic[key] = (child_node, slot)
    outcome = await child_node.execute(child)
    slot.record(child_node, outcome, ctx.session)
    if outcome.status == "failed":
        del ctx.dynamic[key]
        await ctx.commit(child.pending)
        raise outcome.error or RuntimeError(f"Node {child.node_path} failed.")
    if outcome.status == "waiting":
        ctx.dynamic[key] = {"slot": slot.to_json(child_node)}
        ctx.interrupt_ids.extend(w for w in slot.interrupts if w not in ctx.interrupt_ids)
        await ctx.commit(child.pending)
        raise ChildWaiting
    ctx.dynamic[key] = {"output": outcome.output}
    await ctx.commit(child.pending)
    return outcome.output
