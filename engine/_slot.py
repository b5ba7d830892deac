"""A slot holds one node activation across pauses: its input, what it waits on, its answers.

Workflows keep a slot per unfinished node, agents one per pending tool call of a node tool, and
the runner one for the root. The rules for resuming an activation live here once:

- a composite node (workflow, agent) resumes from its own checkpoint (``child``) with the
  answers addressed to its subtree, keyed by wire id;
- a leaf with ``rerun_on_resume`` runs again under the same run id with ``ctx.resume_inputs``
  (keyed by the interrupt ids the node asked with);
- any other leaf completes once all its interrupts are answered, with the answer as its output
  (a dict keyed by interrupt id when it asked several things).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._context import Context, Outcome
from ._listener import NodeStatus

if TYPE_CHECKING:
    from ._node import BaseNode
    from ._runtime import RunSession

__all__ = ["Slot"]


def _dynamic_wires(records: Any) -> set[str]:
    from ._dynamic import dynamic_wires  # a cycle: _dynamic imports this module

    return dynamic_wires(records)


RUN = "run"
COMPLETE = "complete"


@dataclass(slots=True)
class Slot:
    """One activation: ``status`` is ``running`` or ``waiting``; ``run`` is its run id."""

    status: str
    run: str
    input: Any = None
    branch: str | None = None
    interrupts: dict[str, str] = field(default_factory=dict)
    """Wire id → the id the node asked with (equal for composites)."""
    resume_inputs: dict[str, Any] = field(default_factory=dict)
    """Answers so far, keyed by the node's own interrupt ids (leaves only)."""
    child: Any = None
    """A composite node's checkpoint."""
    awaiting_message: bool = False
    ctx: Context | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    messages: list[Any] = field(default_factory=list)

    # -- checkpoint form -------------------------------------------------------------------

    def to_json(self, node: BaseNode) -> dict[str, Any]:
        ctx = self.ctx
        if ctx is not None and node.composite:
            child = node.snapshot(ctx)
        elif ctx is not None and ctx.dynamic:  # a leaf's children started with ctx.run_node
            from ._dynamic import dynamic_snapshot  # a cycle: _dynamic imports this module

            child = dynamic_snapshot(ctx.dynamic)
        else:
            child = self.child
        data: dict[str, Any] = {"status": self.status, "run": self.run}
        if self.status == "running" or node.rerun_on_resume:
            data["input"] = self.input
        if self.branch:
            data["branch"] = self.branch
        if self.interrupts:
            data["interrupts"] = self.interrupts
        if self.resume_inputs:
            data["resume_inputs"] = self.resume_inputs
        if child is not None:
            data["child"] = child
        if self.awaiting_message:
            data["awaiting_message"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Slot:
        interrupts = data.get("interrupts")
        resume_inputs = data.get("resume_inputs")
        return cls(
            data["status"],
            str(data["run"]),
            data.get("input"),
            data.get("branch"),
            dict(interrupts) if interrupts else {},
            dict(resume_inputs) if resume_inputs else {},
            data.get("child"),
            data.get("awaiting_message", False),
        )

    # -- resuming --------------------------------------------------------------------------

    def deliver(self, node: BaseNode, answers: dict[str, Any], messages: list[Any], session: RunSession) -> str | None:
        """Take the answers (wire id → value) and messages meant for this activation.

        Returns ``"run"`` when the activation must run again, ``"complete"`` when it is done
        (see :meth:`answer_output`), or None when it still waits. Messages are taken only by an
        activation awaiting one; ``messages`` is emptied when taken.
        """
        if self.status != "waiting":
            return None
        hit = {wire: value for wire, value in answers.items() if wire in self.interrupts}
        wants_message = self.awaiting_message and bool(messages)
        if not hit and not wants_message:
            return None
        if node.composite:
            self.answers = hit
            if wants_message:
                self.messages = list(messages)
                messages.clear()
            self.status = "running"
            self.awaiting_message = False
            return RUN
        children = _dynamic_wires(self.child) if self.child else ()
        if children:
            self.answers = {wire: value for wire, value in hit.items() if wire in children}
        for wire, value in hit.items():
            local = self.interrupts.pop(wire)
            if wire not in children:
                self.resume_inputs[local] = value
                session.close_interrupt(wire)
        if node.rerun_on_resume or children:
            self.status = "running"
            return RUN
        return None if self.interrupts else COMPLETE

    def report_completed(self, path: str, name: str, session: RunSession) -> None:
        """Tell the listener about a leaf completed by its answers (it does not run again)."""
        if session.listener is not None:
            session.node_started(path, name)
            session.node_ended(path, NodeStatus.COMPLETED)

    def answer_output(self) -> Any:
        """The output of a leaf completed by its answers."""
        if len(self.resume_inputs) == 1:
            return next(iter(self.resume_inputs.values()))
        return dict(self.resume_inputs)

    def bind(self, ctx: Context, node: BaseNode, *, fresh: bool) -> Context:
        """Attach a new context for running this slot's node; returns it."""
        if node.composite:
            ctx.resume_inputs = self.answers
            ctx.saved = None if fresh else self.child
        else:
            ctx.resume_inputs = dict(self.resume_inputs)
            ctx.dynamic = dict(self.child) if isinstance(self.child, dict) else {}
            ctx.dynamic_answers = self.answers
        ctx.messages = self.messages
        self.answers, self.messages = {}, []
        self.ctx = ctx
        if ctx.session.listener is not None:
            ctx.session.node_started(ctx.node_path, node.name)
        return ctx

    def record(self, node: BaseNode, outcome: Outcome, session: RunSession) -> None:
        """Note how the activation ended; cancels interrupts it no longer waits on.

        Tells the run's listener that the activation stopped (see :mod:`engine._listener`).
        """
        ctx = self.ctx
        if ctx is not None and session.listener is not None:
            session.node_ended(ctx.node_path, outcome.status)
        previous = self.interrupts
        if outcome.status == "waiting":
            registry = session.registry
            self.status = "waiting"
            self.awaiting_message = outcome.awaiting_message
            self.interrupts = {
                wire: (wire if node.composite or wire not in registry else registry[wire].local_id)
                for wire in outcome.interrupts
            }
            if node.composite and ctx is not None:
                self.child = node.snapshot(ctx)
            elif ctx is not None and ctx.dynamic:
                from ._dynamic import dynamic_snapshot  # a cycle: _dynamic imports this module

                self.child = dynamic_snapshot(ctx.dynamic)
        else:
            self.interrupts = {}
        if previous:
            for wire in previous.keys() - self.interrupts.keys():
                session.cancel_interrupt(wire)
        if ctx is not None and node.composite:
            # The activation is over (its checkpoint, if it waits, is in ``child``): drop its live
            # state, which points back at the context (a workflow's loop does), so that the run's
            # objects are freed when the run ends rather than by the garbage collector.
            ctx.saved = None
        self.ctx = None
