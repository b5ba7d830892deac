"""An LLM agent's checkpoint: its transcript, the tool calls waiting, the batch in progress.

Split from :mod:`engine._agent_calls` (which runs the calls). :class:`AgentRun` is what the agent
node keeps across a pause or a crash, as JSON (``to_json`` / ``from_json``): the conversation so
far, each :class:`Pending` call (a confirmation, an answer, a long-running result or a node tool's
paused child, with that child's slot) and the :class:`Batch` of the model turn being run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._events import Content, FunctionCall, Part
from ._node_tool import NodeTool
from ._slot import Slot
from ._task_tool import TaskAgentTool
from ._tools import BaseTool

if TYPE_CHECKING:
    from ._agent import LlmAgent

__all__ = ["AgentRun", "Batch", "Pending"]


@dataclass
class Pending:
    """A tool call waiting: on a confirmation, an answer, a long-running result, a child node
    (``node``) or a task sub-agent (``task``)."""

    kind: str
    call: FunctionCall
    interrupt: str = ""
    slot: Slot | None = None

    def to_json(self, tool: BaseTool | None) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "call": self.call.model_dump(exclude_none=True)}
        if self.interrupt:
            data["interrupt"] = self.interrupt
        if self.slot is not None and isinstance(tool, NodeTool | TaskAgentTool):
            data["slot"] = self.slot.to_json(tool.node)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pending:
        slot = Slot.from_json(data["slot"]) if "slot" in data else None
        return cls(data["kind"], FunctionCall.model_validate(data["call"]), data.get("interrupt", ""), slot)

    def interrupt_ids(self) -> list[str]:
        if self.slot is not None:
            return list(self.slot.interrupts)
        return [self.interrupt]


@dataclass
class Batch:
    """Responses gathered while a model turn's calls run (kept across a crash)."""

    todo: list[FunctionCall] = field(default_factory=list)
    responses: list[Part] = field(default_factory=list)
    confirmations: list[Part] = field(default_factory=list)
    requested: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    skip: bool = False
    finished: Any = None
    has_finished: bool = False
    transfer: str | None = None
    delegated: bool = False
    """A task sub-agent finished during this batch (its response event is out): the model runs next."""


@dataclass
class AgentRun:
    """An agent node's checkpoint: the transcript (``None`` before the first turn), the calls
    waiting by call id, the batch in progress, whether a task-mode agent waits for the user's next
    message, a handoff to apply, and whether a model call was under way."""

    transcript: list[Content] | None
    pending: dict[str, Pending] = field(default_factory=dict)
    batch: Batch | None = None
    awaiting_message: bool = False
    transfer: str | None = None
    """The agent the model handed the conversation to (applied once no call is pending)."""
    model_due: bool = False
    """The model is to be called next (a new run, a finished batch, an answer for the model, or
    a model call a dead run or the failed run a retry resumes was making)."""

    def to_json(self, agent: LlmAgent) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.transcript is not None:
            data["transcript"] = [c.model_dump(exclude_none=True) for c in self.transcript]
        if self.pending:
            data["pending"] = {cid: p.to_json(agent.tool(p.call.name)) for cid, p in self.pending.items()}
        if self.batch is not None:
            b = self.batch
            data["batch"] = {
                "todo": [c.model_dump(exclude_none=True) for c in b.todo],
                "responses": [p.model_dump(exclude_none=True) for p in b.responses],
                "confirmations": [p.model_dump(exclude_none=True) for p in b.confirmations],
                "requested": b.requested,
                "state": b.state,
                "skip": b.skip,
                "finished": b.finished,
                "has_finished": b.has_finished,
            }
            if b.transfer:
                data["batch"]["transfer"] = b.transfer
            if b.delegated:
                data["batch"]["delegated"] = True
        if self.awaiting_message:
            data["awaiting_message"] = True
        if self.transfer:
            data["transfer"] = self.transfer
        if self.model_due:
            data["model_due"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentRun:
        transcript = data.get("transcript")
        run = cls(
            transcript=[Content.model_validate(c) for c in transcript] if transcript is not None else None,
            pending={cid: Pending.from_json(p) for cid, p in data.get("pending", {}).items()},
            awaiting_message=data.get("awaiting_message", False),
            transfer=data.get("transfer"),
            model_due=data.get("model_due", False),
        )
        if "batch" in data:
            b = data["batch"]
            run.batch = Batch(
                todo=[FunctionCall.model_validate(c) for c in b["todo"]],
                responses=[Part.model_validate(p) for p in b["responses"]],
                confirmations=[Part.model_validate(p) for p in b["confirmations"]],
                requested=b["requested"],
                state=b["state"],
                skip=b["skip"],
                finished=b["finished"],
                has_finished=b["has_finished"],
                transfer=b.get("transfer"),
                delegated=b.get("delegated", False),
            )
        return run

    def interrupt_ids(self) -> list[str]:
        return [wire for p in self.pending.values() for wire in p.interrupt_ids()]

    def awaits_message(self) -> bool:
        """True when the agent, or a task sub-agent it delegated to, waits for the user's next message."""
        return self.awaiting_message or any(
            p.kind == "task" and p.slot is not None and p.slot.awaiting_message for p in self.pending.values()
        )
