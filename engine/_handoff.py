"""Handoffs: agents that pass one conversation between them (ADK ``transferToAgent``).

A :class:`HandoffGroup` holds several :class:`~engine.LlmAgent` s; each names the agents it may
hand off to (``LlmAgent(handoffs=[...])``). One agent is *active*. Each of its turns is one
activation ``<group>@1/<agent>@<n>`` (so each turn is one node run for listeners and AG-UI
steps). The active agent's model either

- calls ``transfer_to_agent(agent_name)``: the turn ends (its event carries
  ``actions.transferToAgent``) and the named agent becomes active and takes the next turn at once;
- calls other tools: they run as for any agent, approvals and long-running results pause the
  group as they pause an agent;
- answers with text: when ``done_when(text)`` is true (or no ``done_when`` is given) the group
  completes with that text as its output; otherwise the group waits for the user's next message
  (``Runner.start`` delivers it), and the same agent answers it.

Every agent runs in chat mode: it reads the shared conversation from the session's history
(user messages, its own calls and responses, the other agents' texts as context). The group's
checkpoint holds the active agent, the turn counters, the number of handoffs so far and the
active turn's own checkpoint, so a resume or a restart continues with the right agent and never
repeats a finished turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._agent import LlmAgent
from ._context import Context, Outcome
from ._errors import ConfigurationError, WorkflowDataError, node_failed
from ._node import BaseNode
from ._slot import RUN, Slot

__all__ = ["HandoffGroup"]


@dataclass
class _Team:
    """The group's progress: who is active, turns per agent, handoffs so far, the active turn."""

    active: str
    counters: dict[str, int] = field(default_factory=dict)
    handoffs: int = 0
    turn: Slot | None = None
    awaiting_message: bool = False

    def to_json(self, agents: dict[str, LlmAgent]) -> dict[str, Any]:
        data: dict[str, Any] = {"active": self.active, "counters": self.counters, "handoffs": self.handoffs}
        if self.turn is not None:
            data["turn"] = self.turn.to_json(agents[self.active])
        if self.awaiting_message:
            data["awaiting_message"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Team:
        return cls(
            active=data["active"],
            counters=dict(data.get("counters", {})),
            handoffs=int(data.get("handoffs", 0)),
            turn=Slot.from_json(data["turn"]) if "turn" in data else None,
            awaiting_message=bool(data.get("awaiting_message", False)),
        )


class HandoffGroup(BaseNode):
    """Agents handing one conversation to each other (see the module docstring).

    Args:
        name: the group's name (its node path segment).
        agents: the agents; the first is active at the start unless ``entry`` names another.
            Their ``handoffs`` must name agents of the group; their mode must be None or
            ``"chat"`` (None is set to ``"chat"``).
        entry: the agent active at the start.
        done_when: ``(text) -> bool``: whether a text reply ends the conversation (None: every
            text reply does); otherwise the group waits for the user's next message.
        max_handoffs: most handoffs in one activation; one more fails the group with
            :class:`~engine.WorkflowDataError` (a guard against two agents passing a
            conversation back and forth for ever).
        input_schema: validates the group's input when it is the root of a session.

    Raises:
        ConfigurationError: an agent is not an LlmAgent, two share a name, a handoff names no
            agent of the group, or ``entry`` is unknown.
    """

    composite = True
    authors_own_events = True

    def __init__(
        self,
        name: str,
        agents: Sequence[LlmAgent],
        *,
        entry: str | None = None,
        done_when: Callable[[str], bool] | None = None,
        max_handoffs: int = 10,
        description: str = "",
        input_schema: Any = None,
    ) -> None:
        super().__init__(name=name, description=description, rerun_on_resume=True, input_schema=input_schema)
        if not agents or not all(isinstance(a, LlmAgent) for a in agents):
            raise ConfigurationError(f"HandoffGroup {name}: agents must be LlmAgents (at least one).")
        self.agents: dict[str, LlmAgent] = {a.name: a for a in agents}
        if len(self.agents) != len(agents):
            raise ConfigurationError(f"HandoffGroup {name}: two agents share a name.")
        for agent in agents:
            unknown = [target for target in agent.handoffs if target not in self.agents]
            if unknown:
                raise ConfigurationError(f"HandoffGroup {name}: {agent.name} hands off to unknown {unknown}.")
            if agent.mode not in (None, "chat"):
                raise ConfigurationError(f"HandoffGroup {name}: {agent.name} must run in chat mode.")
            agent.mode = "chat"
        self.entry = entry or agents[0].name
        if self.entry not in self.agents:
            raise ConfigurationError(f"HandoffGroup {name}: entry {self.entry!r} is not one of its agents.")
        self.done_when = done_when
        self.max_handoffs = max_handoffs

    def snapshot(self, ctx: Context) -> Any:
        return ctx.saved.to_json(self.agents) if isinstance(ctx.saved, _Team) else ctx.saved

    async def execute(self, ctx: Context) -> Outcome:
        if isinstance(ctx.saved, _Team):
            team = ctx.saved
        elif ctx.saved is not None:
            team = _Team.from_json(ctx.saved)
        else:
            if not ctx.input_valid:
                try:
                    ctx.node_input = self.validate_input(ctx.node_input)
                except Exception as exc:
                    return Outcome.failed(exc)
            team = _Team(active=self.entry)
        ctx.saved = team
        resume = False
        if team.turn is not None and team.turn.status == "waiting":
            verdict = team.turn.deliver(self.agents[team.active], ctx.resume_inputs, [], ctx.session)
            if verdict != RUN:
                return Outcome.waiting(list(team.turn.interrupts))
            resume = True
        elif team.turn is not None:
            resume = True  # a turn that was running when its process died: it goes on from its checkpoint
        elif team.awaiting_message:
            if not ctx.messages:
                return Outcome.waiting([], awaiting_message=True)
            team.awaiting_message = False  # the message is in the session's history; the agent reads it there
        ctx.resume_inputs, ctx.messages = {}, []
        while True:
            outcome = await self._turn(ctx, team, resume=resume)
            resume = False
            if outcome is not None:
                return outcome

    async def _turn(self, ctx: Context, team: _Team, *, resume: bool) -> Outcome | None:
        """Run (or resume) the active agent's turn; None when a handoff makes another agent active."""
        agent = self.agents[team.active]
        if team.turn is None or not resume:
            run = team.counters.get(agent.name, 0) + 1
            team.counters[agent.name] = run
            team.turn = Slot(status="running", run=str(run), input=ctx.node_input, branch=ctx.branch)
        turn = team.turn
        child = ctx.child(agent, run_id=turn.run, node_input=turn.input, branch=turn.branch, author=agent.name)
        turn.bind(child, agent, fresh=not resume)
        outcome = await agent.execute(child)
        turn.record(agent, outcome, ctx.session)
        if outcome.status == "waiting":
            await ctx.commit(child.pending)
            return Outcome.waiting(list(turn.interrupts))
        team.turn = None
        if outcome.status == "failed":
            await ctx.commit(child.pending)
            return Outcome.failed(node_failed(child.node_path, outcome.error))
        if isinstance(outcome.route, str) and outcome.route in agent.handoffs:
            team.handoffs += 1
            if team.handoffs > self.max_handoffs:
                await ctx.commit(child.pending)
                error = WorkflowDataError(f"HandoffGroup {self.name}: more than {self.max_handoffs} handoffs.")
                return Outcome.failed(node_failed(ctx.node_path, error))
            team.active = outcome.route
            await ctx.commit(child.pending)
            return None
        text = outcome.output if isinstance(outcome.output, str) else str(outcome.output or "")
        if self.done_when is None or self.done_when(text):
            await ctx.commit(child.pending)
            return Outcome.completed(outcome.output)
        team.awaiting_message = True
        await ctx.commit(child.pending)
        return Outcome.waiting([], awaiting_message=True)
