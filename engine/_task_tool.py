"""Task-mode sub-agents: ``LlmAgent(sub_agents=[...])`` delegating a task by a function call
named after the sub-agent (ADK 2.13 ``tools/agent_tool.py`` ``_TaskAgentTool``,
``workflow/_llm_agent_wrapper.py``).

The coordinator's model calls ``<sub_agent>(request=...)`` (or the sub-agent's ``input_schema``).
The sub-agent (``mode="task"``) then runs as the child ``<coordinator path>/<sub>@<call id>`` with
``isolationScope`` = the call id, so its conversation stays its own: it talks with the user (each
text reply waits for the user's next message, which goes to it) until it calls ``finish_task``.
Its result goes back to the coordinator as a function response authored ``user``
(``response`` = the result when it is an object, else ``{"output": result}``) and the
coordinator's model runs again. Interrupts raised inside the sub-agent (a confirmation, a
``request_input``) pause the coordinator and resume the sub-agent, as node tools do; the
coordinator's checkpoint holds the sub-agent's slot, so nothing it did runs again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from ._context import Context
from ._errors import ConfigurationError
from ._events import Content, Event, FunctionCall, FunctionResponse, Part
from ._tools import BaseTool, ToolArgumentError

if TYPE_CHECKING:
    from ._agent import LlmAgent
    from ._agent_run import AgentRun
    from ._slot import Slot

__all__ = ["TaskAgentTool", "run_task"]

_DELEGATION_NOTE = (
    "\nIMPORTANT: This tool delegates execution to a specialized agent. "
    "Do NOT call this tool in parallel with any other tools."
)


class TaskAgentTool(BaseTool):
    """The delegation tool of one task-mode sub-agent (see the module docstring).

    Raises:
        ConfigurationError: the agent is not in task mode.
    """

    def __init__(self, agent: LlmAgent) -> None:
        if agent.mode != "task":
            raise ConfigurationError(
                f"Sub-agent {agent.name} must have mode='task' (other sub-agents are handoff targets: use handoffs)."
            )
        super().__init__(name=agent.name, description=(agent.description + _DELEGATION_NOTE).strip())
        self.node = agent
        self._adapter: TypeAdapter[Any] | None = None
        if agent.input_schema is not None:
            self._adapter = TypeAdapter(agent.input_schema)
            self._schema = self._adapter.json_schema()
        else:
            self._schema = {
                "type": "object",
                "properties": {
                    "request": {
                        "type": "string",
                        "description": "Detailed instructions or context for the task sub-agent.",
                    }
                },
                "required": ["request"],
            }

    def parameters(self) -> dict[str, Any]:
        return self._schema

    def child_input(self, args: dict[str, Any]) -> Any:
        """The sub-agent's input: the ``request`` text, or the arguments checked by its input_schema.

        Raises:
            ToolArgumentError: the arguments do not fit.
        """
        if self._adapter is None:
            request = args.get("request")
            if not isinstance(request, str):
                raise ToolArgumentError(
                    f"Invalid arguments for {self.name}: request must be a string",
                    [{"path": ["request"], "message": "a string is required"}],
                )
            return request
        try:
            self._adapter.validate_python(args)
        except ValidationError as exc:
            errors = [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
            raise ToolArgumentError(f"Invalid arguments for {self.name}: {exc.error_count()} error(s)", errors) from exc
        return args

    @staticmethod
    def response(output: Any) -> dict[str, Any]:
        """The coordinator's function response for a finished task (ADK ``_synthesize_task_fr_event``)."""
        return output if isinstance(output, dict) else {"output": output}

    async def call(self, args: dict[str, Any], tool_context: Any) -> Any:
        raise ConfigurationError("A task sub-agent runs as a child of its coordinator, not through call().")


async def run_task(
    ctx: Context, run: AgentRun, call: FunctionCall, tool: TaskAgentTool, slot: Slot, *, fresh: bool
) -> bool:
    """Run (or resume) the sub-agent a coordinator delegated ``call`` to, in ``ctx`` (the
    coordinator's activation); True when it finished and its result was emitted.

    A sub-agent that waits is kept in ``run.pending`` with its slot.

    Raises:
        Exception: the sub-agent failed (its error).
    """
    from ._agent_run import Pending  # a cycle: _agent_run imports this module

    node = tool.node
    child = Context(
        session=ctx.session,
        node=node,
        path=f"{ctx.node_path}/{node.name}@{slot.run}",
        run_id=slot.run,
        node_input=slot.input,
        parent=ctx,
        branch=slot.branch,
        author=node.name,
        isolation_scope=call.id,
    )
    slot.bind(child, node, fresh=fresh)
    outcome = await node.execute(child)
    slot.record(node, outcome, ctx.session)
    if outcome.status == "failed":
        await ctx.commit(child.pending)
        raise outcome.error or ConfigurationError(f"Sub-agent {tool.name} failed.")
    if outcome.status == "waiting":
        run.pending[call.id or ""] = Pending("task", call, slot=slot)
        await ctx.commit(child.pending)
        return False
    run.pending.pop(call.id or "", None)
    await ctx.commit(child.pending)
    response = Part(
        function_response=FunctionResponse(id=call.id, name=call.name, response=tool.response(outcome.output))
    )
    content = Content(role="user", parts=[response])
    ctx.emit(Event(author="user", content=content))  # ADK: the task's result comes back as the user's
    if run.transcript is not None:
        run.transcript.append(content)
    await ctx.commit()
    return True
