"""The Workflow node: a graph of nodes scheduled by edges and routes, resumable from a checkpoint.

Semantics follow ADK 2.x (``workflow/_workflow.py``):

- START's targets receive the workflow's input. A finished node triggers the targets of its
  matching edges with its output as their ``node_input``; a node emitting no matching route ends
  its branch.
- A node runs one activation at a time (``name@1``, ``name@2``, …); triggers that arrive while it
  runs or waits are queued in arrival order. Up to ``max_concurrency`` nodes run at once (None:
  no limit). When one completion triggers several targets, each runs on its own branch
  (``<target>@<n>``).
- A join (``wait_for_all``) fires once every predecessor has finished, with a dict of their
  outputs keyed by predecessor name.
- Function-node events are authored by the workflow's name; agents and nested workflows author
  their own. The output of a terminal node (no outgoing edges) is the workflow's output.
- While a task-mode agent waits for the user's next message, no other node starts.

Pausing and resuming: when no node can run and some wait on interrupts, the workflow returns a
waiting outcome. Its checkpoint (:meth:`Workflow.snapshot`) holds run counters, queued triggers,
join arrivals and, per unfinished node, its status, input, pending interrupts, answers so far and
its children's checkpoints. A resume restores that and delivers the answers: a node with
``rerun_on_resume`` runs again under the same run id with ``ctx.resume_inputs``; any other leaf
completes with the answer as its output (a dict keyed by interrupt id when it asked several
things); composite nodes resume from their own checkpoints. Finished nodes never run again, and
the cost of a resume does not depend on how long the session's history is. Nodes that were
running when a process died start again from their input.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ._context import Context, Outcome
from ._errors import ConfigurationError, node_failed
from ._graph import Graph, build_graph
from ._listener import NodeStatus
from ._node import BaseNode, as_node
from ._schemas import check_state_schema
from ._slot import Slot

__all__ = ["Workflow"]

logger = logging.getLogger("engine")


def _join_branch(base: str | None, segment: str) -> str:
    return f"{base}.{segment}" if base else segment


def _common_prefix(branches: list[str | None]) -> str | None:
    parts = [b.split(".") if b else [] for b in branches]
    if not parts:
        return None
    prefix: list[str] = []
    for segments in zip(*parts, strict=False):
        if all(s == segments[0] for s in segments):
            prefix.append(segments[0])
        else:
            break
    return ".".join(prefix) or None


def _text_field(schema: Any) -> str | None:
    """The only required field of a pydantic model ``schema`` when it is a ``str`` (a plain text
    input fills it), else None."""
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    required = [n for n, f in schema.model_fields.items() if f.is_required()]
    return required[0] if len(required) == 1 and schema.model_fields[required[0]].annotation is str else None


@dataclass
class _Trigger:
    input: Any
    branch: str | None
    sub_branch: bool = False


class Workflow(BaseNode):
    """A graph of nodes (see the module docstring); itself a node, so workflows nest.

    Args:
        name: the workflow's name (also the author of its function nodes' events).
        edges: edge items (see :mod:`engine._graph`).
        input_schema: pydantic model or type validating the workflow's input. A plain text
            input is wrapped into the model's only required ``str`` field when it has one.
        output_schema: validates the workflow's output.
        state_schema: pydantic model validating state writes of session keys (keys with the
            ``app:``, ``user:`` or ``temp:`` prefix are not checked).
        max_concurrency: most nodes running at once (None: no limit).
        version: the definition's version; a session resumes only under the version it
            started with (see :class:`~engine.Runner`).
    """

    authors_own_events = True
    composite = True

    def __init__(
        self,
        name: str,
        edges: list[Any],
        *,
        description: str = "",
        input_schema: Any = None,
        output_schema: Any = None,
        state_schema: type[BaseModel] | None = None,
        max_concurrency: int | None = None,
        version: str = "1",
        retry_config: Any = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            rerun_on_resume=True,
            input_schema=input_schema,
            output_schema=output_schema,
            retry_config=retry_config,
            timeout=timeout,
        )
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigurationError(f"Workflow {name}: max_concurrency must be at least 1.")
        self._text_field = _text_field(input_schema)
        self.graph: Graph = build_graph(edges, as_node)
        self.max_concurrency = max_concurrency
        self.state_schema = state_schema
        self.version = version
        if state_schema is not None:
            check_state_schema(self, state_schema)

    def validate_input(self, value: Any) -> Any:
        if isinstance(value, str) and self._text_field is not None:
            value = {self._text_field: value}
        validated = super().validate_input(value)
        return validated.model_dump(mode="json") if isinstance(validated, BaseModel) else validated

    async def execute(self, ctx: Context) -> Outcome:
        if self.state_schema is not None:
            ctx.state_schema = self.state_schema  # inherited by every node below (ADK does the same)
        if isinstance(ctx.saved, _Loop):
            loop = ctx.saved
        elif ctx.saved is not None:
            loop = _Loop.restore(self, ctx, ctx.saved)
        else:
            if not ctx.input_valid:
                try:
                    ctx.node_input = self.validate_input(ctx.node_input)
                except Exception as exc:
                    return Outcome.failed(exc)
            loop = _Loop.fresh(self, ctx)
        ctx.saved = loop
        loop.deliver(ctx.resume_inputs, ctx.messages)
        ctx.resume_inputs, ctx.messages = {}, []
        outcome = await loop.run()
        if outcome.status == "completed" and outcome.output is not None:
            try:
                outcome.output = self.validate_output(outcome.output)
            except Exception as exc:
                return Outcome.failed(exc)
        return outcome

    def snapshot(self, ctx: Context) -> Any:
        return ctx.saved.to_json() if isinstance(ctx.saved, _Loop) else ctx.saved


class _Loop:
    """The scheduling state of one workflow activation."""

    def __init__(self, wf: Workflow, ctx: Context) -> None:
        self.wf = wf
        self.graph = wf.graph
        self.ctx = ctx
        self.counters: dict[str, int] = {}
        self.nodes: dict[str, Slot] = {}
        self.triggers: dict[str, list[_Trigger]] = {}
        self.joins: dict[str, dict[str, Any]] = {}
        self.join_branches: dict[str, dict[str, str | None]] = {}
        self.terminal_output: Any = None
        self.ready: list[str] = []
        self.completed_on_resume: list[str] = []
        self.tasks: dict[str, asyncio.Task[Outcome]] = {}
        self.starting: list[tuple[str, Coroutine[Any, Any, Outcome]]] = []
        """Node runs launched by the last scheduling pass, not started yet."""
        self.recovered: set[str] = set()
        """Nodes the restored checkpoint shows running: a run that died left them mid-way."""

    # -- (de)serialisation -----------------------------------------------------------------

    @classmethod
    def fresh(cls, wf: Workflow, ctx: Context) -> _Loop:
        loop = cls(wf, ctx)
        sub = len(wf.graph.start_targets) > 1
        for target in wf.graph.start_targets:
            if wf.graph.nodes[target].wait_for_all:
                loop._arrive_at_join(target, "START", ctx.node_input, ctx.branch)
            else:
                loop.triggers.setdefault(target, []).append(_Trigger(ctx.node_input, ctx.branch, sub))
        return loop

    @classmethod
    def restore(cls, wf: Workflow, ctx: Context, data: dict[str, Any]) -> _Loop:
        loop = cls(wf, ctx)
        # Absent keys (to_json leaves empty ones out) keep the fresh loop's empty containers.
        if counters := data.get("counters"):
            loop.counters = dict(counters)
        if nodes := data.get("nodes"):
            loop.nodes = {name: Slot.from_json(slot) for name, slot in nodes.items()}
            loop.ready = [name for name, slot in loop.nodes.items() if slot.status == "running"]
            # A checkpoint only pauses with every node waiting: a running one was cut off by a dead run.
            loop.recovered = set(loop.ready)
        if triggers := data.get("triggers"):
            loop.triggers = {
                name: [_Trigger(t.get("input"), t.get("branch"), t.get("sub", False)) for t in items]
                for name, items in triggers.items()
            }
        if joins := data.get("joins"):
            loop.joins = {name: dict(arrivals) for name, arrivals in joins.items()}
            loop.join_branches = {name: dict(b) for name, b in data.get("join_branches", {}).items()}
        loop.terminal_output = data.get("terminal_output")
        return loop

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"counters": self.counters}
        nodes = {name: slot.to_json(self.graph.nodes[name]) for name, slot in self.nodes.items()}
        if nodes:
            data["nodes"] = nodes
        triggers = {
            name: [{"input": t.input, "branch": t.branch, "sub": t.sub_branch} for t in items]
            for name, items in self.triggers.items()
            if items
        }
        if triggers:
            data["triggers"] = triggers
        if self.joins:
            data["joins"] = self.joins
            data["join_branches"] = self.join_branches
        if self.terminal_output is not None:
            data["terminal_output"] = self.terminal_output
        return data

    # -- delivering answers ----------------------------------------------------------------

    def deliver(self, answers: dict[str, Any], messages: list[Any]) -> None:
        """Route answers (keyed by wire id) and user messages to the nodes waiting on them."""
        messages = list(messages)
        for name, slot in self.nodes.items():
            verdict = slot.deliver(self.graph.nodes[name], answers, messages, self.ctx.session)
            if verdict == "run":
                self.ready.append(name)
            elif verdict == "complete":
                self.completed_on_resume.append(name)

    # -- scheduling ------------------------------------------------------------------------

    async def run(self) -> Outcome:
        if self.completed_on_resume:
            for name in self.completed_on_resume:
                slot = self.nodes.pop(name)
                if self.ctx.session.listener is not None:  # else there is nobody to tell (no path to format)
                    slot.report_completed(f"{self.ctx.node_path}/{name}@{slot.run}", name, self.ctx.session)
                self._after_completion(name, slot, slot.answer_output(), None)
            self.completed_on_resume = []
            await self.ctx.commit()
        failure: Outcome | None = None
        while True:
            if failure is None:
                self._schedule()
            if not self.tasks and len(self.starting) == 1:
                # One node to run and nothing else running: run it here, without a task of its own.
                name, work = self.starting.pop()
                result = await self._finish(name, await work)
                if result is not None:
                    failure = result
                continue
            for name, work in self.starting:
                self.tasks[name] = asyncio.ensure_future(work)
            self.starting.clear()
            if not self.tasks:
                break
            done, _ = await asyncio.wait(self.tasks.values(), return_when=asyncio.FIRST_COMPLETED)
            for name in [n for n, t in self.tasks.items() if t in done]:
                task = self.tasks.pop(name)
                if task.cancelled():  # stopped because a sibling failed
                    stopped = self.nodes.pop(name, None)
                    if stopped is not None and stopped.ctx is not None:
                        self.ctx.session.node_ended(stopped.ctx.node_path, NodeStatus.CANCELLED)
                    continue
                outcome = task.result()
                result = await self._finish(name, outcome)
                if result is not None and failure is None:
                    failure = result
                    for other in self.tasks.values():
                        other.cancel()
        if failure is not None:
            return failure
        waiting = [slot for slot in self.nodes.values() if slot.status == "waiting"]
        if waiting:
            interrupts = [wire for slot in waiting for wire in slot.interrupts]
            return Outcome.waiting(interrupts, awaiting_message=any(s.awaiting_message for s in waiting))
        return Outcome("completed", self.terminal_output)

    def _schedule(self) -> None:
        limit = self.wf.max_concurrency
        while self.ready:
            if limit is not None and len(self.tasks) + len(self.starting) >= limit:
                return
            self._launch(self.ready.pop(0), fresh=False)
        for slot in self.nodes.values():
            if slot.awaiting_message:
                return  # a task agent is talking with the user: nothing else starts meanwhile
        for name in list(self.triggers):
            if limit is not None and len(self.tasks) + len(self.starting) >= limit:
                return
            if name in self.nodes:
                continue
            queue = self.triggers[name]
            trigger = queue.pop(0)
            if not queue:
                del self.triggers[name]
            run = self.counters.get(name, 0) + 1
            self.counters[name] = run
            branch = _join_branch(trigger.branch, f"{name}@{run}") if trigger.sub_branch else trigger.branch
            self.nodes[name] = Slot("running", str(run), trigger.input, branch)
            self._launch(name, fresh=True)

    def _launch(self, name: str, *, fresh: bool) -> None:
        node = self.graph.nodes[name]
        slot = self.nodes[name]
        ctx = self.ctx
        child = ctx.child(
            node,
            run_id=slot.run,
            node_input=slot.input,
            branch=slot.branch,
            author=node.name if node.authors_own_events else self.wf.name,
            output_for=[ctx.node_path, *ctx.output_for] if name in self.graph.terminal else None,
        )
        if name in self.recovered:
            self.recovered.discard(name)
            child.recovered = not node.composite  # a composite resumes from its own checkpoint
        slot.bind(child, node, fresh=fresh)
        self.starting.append((name, node.execute(child)))

    async def _finish(self, name: str, outcome: Outcome) -> Outcome | None:
        slot = self.nodes[name]
        child = slot.ctx
        assert child is not None
        node = self.graph.nodes[name]
        slot.record(node, outcome, self.ctx.session)
        if outcome.status == "waiting":
            await self.ctx.commit(child.pending)
            return None
        del self.nodes[name]
        if outcome.status == "failed":
            await self.ctx.commit(child.pending)
            return Outcome.failed(node_failed(child.node_path, outcome.error))
        self._after_completion(name, slot, outcome.output, outcome.route)
        await self.ctx.commit(child.pending)
        return None

    def _after_completion(self, name: str, slot: Slot, output: Any, route: Any) -> None:
        if name in self.graph.terminal and output is not None:
            self.terminal_output = output
        targets = self.graph.next_nodes(name, route)
        if not targets and name not in self.graph.terminal:
            logger.warning(
                "Node %s emitted route %r, which matches none of its edges; the branch ends.",
                f"{self.ctx.node_path}/{name}@{slot.run}",
                route,
            )
        sub = len(targets) > 1
        for target in targets:
            if self.graph.nodes[target].wait_for_all:
                self._arrive_at_join(target, name, output, slot.branch)
            else:
                self.triggers.setdefault(target, []).append(_Trigger(output, slot.branch, sub))

    def _arrive_at_join(self, target: str, source: str, output: Any, branch: str | None) -> None:
        arrivals = self.joins.setdefault(target, {})
        arrivals[source] = output
        self.join_branches.setdefault(target, {})[source] = branch
        predecessors = self.graph.predecessors.get(target, [])
        if all(p in arrivals for p in predecessors):
            del self.joins[target]
            branches = self.join_branches.pop(target)
            inputs = {p: arrivals[p] for p in predecessors if p != "START"}
            self.triggers.setdefault(target, []).append(
                _Trigger(inputs, _common_prefix([branches[p] for p in predecessors]))
            )
