"""The parallel worker: one node mapped over a list (ADK ``workflow/_parallel_worker.py``).

``@node(parallel_worker=True, max_parallel_workers=n)`` (or ``ParallelWorker(node, ...)``) runs
the wrapped node once per item of its list input, at most ``n`` at a time (None: no limit). A
non-list input is treated as a one-item list; an empty list outputs ``[]``. The worker's node
path is ``w@1``; item *k* (1-based) runs as ``w@1/w@k`` on the sub-branch ``<branch>.w@k``. The
output is the list of the items' outputs in input order; the event carrying it is authored by the
enclosing workflow (ADK), the items' events as the wrapped node authors them (an agent by its name).

Items may pause on interrupts. Unlike ADK, which stops starting new items after the first
interrupt, every item runs as far as it can, so all their requests reach reviewers at once; the
worker waits until every item is done. Its checkpoint keeps the outputs of finished items and a
slot per unfinished one, so a resume delivers answers to the waiting items only: finished items
never run again (ADK replays them from the session's events). A failing item cancels the items
still running and fails the worker.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ._context import Context, Outcome
from ._errors import ConfigurationError, node_failed
from ._events import Event
from ._listener import NodeStatus
from ._node import BaseNode, as_node
from ._slot import COMPLETE, RUN, Slot

__all__ = ["ParallelWorker"]


def _sub_branch(base: str | None, segment: str) -> str:
    return f"{base}.{segment}" if base else segment


class _Items:
    """The progress of one worker activation: inputs, finished outputs, unfinished slots."""

    def __init__(self, inputs: list[Any]) -> None:
        self.inputs = inputs
        self.results: dict[int, Any] = {}
        self.slots: dict[int, Slot] = {}
        self.next = 0
        self.ready: list[int] = []
        self.completed: list[int] = []

    def to_json(self, node: BaseNode) -> dict[str, Any]:
        return {
            "next": self.next,
            "results": {str(k): v for k, v in self.results.items()},
            "slots": {str(k): slot.to_json(node) for k, slot in self.slots.items()},
        }

    @classmethod
    def from_json(cls, inputs: list[Any], data: dict[str, Any]) -> _Items:
        items = cls(inputs)
        items.next = int(data.get("next", 0))
        items.results = {int(k): v for k, v in data.get("results", {}).items()}
        items.slots = {int(k): Slot.from_json(s) for k, s in data.get("slots", {}).items()}
        items.ready = sorted(k for k, s in items.slots.items() if s.status == "running")
        return items


class ParallelWorker(BaseNode):
    """Runs ``node`` once per item of a list input (see the module docstring).

    Args:
        node: the node (or function) to map; the worker takes its name.
        max_parallel_workers: most items running at once (None: no limit).

    Raises:
        ConfigurationError: ``max_parallel_workers`` is below 1.
    """

    composite = True

    def __init__(self, node: Any, *, max_parallel_workers: int | None = None) -> None:
        inner = node if isinstance(node, BaseNode) else as_node(node)
        super().__init__(name=inner.name, description=inner.description, rerun_on_resume=True)
        if max_parallel_workers is not None and max_parallel_workers < 1:
            raise ConfigurationError(f"Node {inner.name}: max_parallel_workers must be at least 1.")
        self.node = inner
        self.max_parallel_workers = max_parallel_workers

    def snapshot(self, ctx: Context) -> Any:
        return ctx.saved.to_json(self.node) if isinstance(ctx.saved, _Items) else ctx.saved

    async def execute(self, ctx: Context) -> Outcome:
        inputs = ctx.node_input if isinstance(ctx.node_input, list) else [ctx.node_input]
        if isinstance(ctx.saved, _Items):
            items = ctx.saved
        elif ctx.saved is not None:
            items = _Items.from_json(inputs, ctx.saved)
        else:
            items = _Items(inputs)
        ctx.saved = items
        for k, slot in items.slots.items():
            verdict = slot.deliver(self.node, ctx.resume_inputs, [], ctx.session)
            if verdict == RUN:
                items.ready.append(k)
            elif verdict == COMPLETE:
                items.completed.append(k)
        ctx.resume_inputs = {}
        for k in items.completed:
            done = items.slots.pop(k)
            done.report_completed(f"{ctx.node_path}/{self.node.name}@{done.run}", self.node.name, ctx.session)
            items.results[k] = done.answer_output()
        if items.completed:
            items.completed = []
            await ctx.commit()
        outcome = await self._run(ctx, items)
        if outcome.status == "completed":
            ctx.emit(Event(output=outcome.output))
        return outcome

    async def _run(self, ctx: Context, items: _Items) -> Outcome:
        tasks: dict[int, asyncio.Task[Outcome]] = {}
        limit = self.max_parallel_workers
        failure: Outcome | None = None
        while True:
            while failure is None and (limit is None or len(tasks) < limit):
                if items.ready:
                    k = items.ready.pop(0)
                    tasks[k] = self._launch(ctx, items, k, fresh=False)
                elif items.next < len(items.inputs):
                    k = items.next
                    items.next += 1
                    branch = _sub_branch(ctx.branch, f"{self.name}@{k + 1}")
                    items.slots[k] = Slot(status="running", run=str(k + 1), input=items.inputs[k], branch=branch)
                    tasks[k] = self._launch(ctx, items, k, fresh=True)
                else:
                    break
            if not tasks:
                break
            done, _ = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_COMPLETED)
            for k in sorted(k for k, t in tasks.items() if t in done):
                task = tasks.pop(k)
                if task.cancelled():  # stopped because a sibling failed
                    stopped = items.slots.get(k)
                    if stopped is not None and stopped.ctx is not None:
                        ctx.session.node_ended(stopped.ctx.node_path, NodeStatus.CANCELLED)
                    continue
                outcome = task.result()
                result = await self._finish(ctx, items, k, outcome)
                if result is not None and failure is None:
                    failure = result
                    for other in tasks.values():
                        other.cancel()
        if failure is not None:
            return failure
        if items.slots:
            waiting = [items.slots[k] for k in sorted(items.slots)]
            return Outcome.waiting([wire for slot in waiting for wire in slot.interrupts])
        return Outcome.completed([items.results.get(k) for k in range(len(items.inputs))])

    def _launch(self, ctx: Context, items: _Items, k: int, *, fresh: bool) -> asyncio.Task[Outcome]:
        slot = items.slots[k]
        child = ctx.child(
            self.node,
            run_id=slot.run,
            node_input=slot.input,
            branch=slot.branch,
            author=self.node.name if self.node.authors_own_events else ctx.author,
        )
        slot.bind(child, self.node, fresh=fresh)
        return asyncio.ensure_future(self._guarded(self.node, child))

    @staticmethod
    async def _guarded(node: BaseNode, child: Context) -> Outcome:
        try:
            return await node.execute(child)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a composite child that raised instead of failing its outcome
            return Outcome.failed(exc)

    async def _finish(self, ctx: Context, items: _Items, k: int, outcome: Outcome) -> Outcome | None:
        slot = items.slots[k]
        child = slot.ctx
        assert child is not None
        slot.record(self.node, outcome, ctx.session)
        if outcome.status == "waiting":
            await ctx.commit(child.pending)
            return None
        del items.slots[k]
        if outcome.status == "failed":
            await ctx.commit(child.pending)
            return Outcome.failed(node_failed(child.node_path, outcome.error))
        items.results[k] = outcome.output
        await ctx.commit(child.pending)
        return None
