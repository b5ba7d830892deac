"""LLM agents as nodes (ADK ``agents/llm_agent.py``, ``workflow/_llm_agent_wrapper.py``).

An :class:`LlmAgent` calls its model with the rendered instruction, the conversation and its
tools' declarations, runs the tools the model calls, and repeats until the model answers with
text. Modes:

- ``single_turn`` (the default inside a workflow): the conversation is the node input; the final
  text is the node's output (``nodeInfo.messageAsOutput``), parsed as JSON when ``output_schema``
  is set, and stored in state under ``output_key``.
- ``chat`` (the default at the root): the conversation is the session's history; each user
  message is one turn.
- ``task``: a multi-turn chat inside a workflow. A text reply waits for the user's next message;
  the agent finishes by calling ``finish_task`` with its result (the node's output). Its events
  carry ``isolationScope`` = its node path.

Instruction templates take ``{key}`` from state (missing keys raise
:class:`~engine.WorkflowDataError`) and ``{key?}`` (missing keys render empty).

Interrupts inside tools (confirmations, long-running calls, the ``request_input`` tool, node tools
that ask) pause the agent; its checkpoint keeps the working conversation, the pending calls and
any half-done batch of calls, so a resume or a restart never calls the model or a finished tool
again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._agent_calls import FINISH_TASK, NOT_FINISHED, TRANSFER_TO_AGENT, ToolCalls
from ._agent_run import AgentRun, Batch
from ._compaction import Compaction
from ._context import Context, Outcome
from ._errors import ConfigurationError, WorkflowDataError
from ._events import Content, Event, FunctionCall, NodeInfo, new_id
from ._history import conversation
from ._interrupts import schema_to_json, validate_json
from ._model_retry import json_reply
from ._models import LlmRequest, Model
from ._node import BaseNode, to_jsonable
from ._task_tool import TaskAgentTool
from ._tools import BaseTool, as_tool

__all__ = ["FINISH_TASK", "LlmAgent", "render_instruction"]

_TEMPLATE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?)(\??)\}")


def render_instruction(template: str, state: Any) -> str:
    """Fill ``{key}`` and ``{key?}`` from ``state``; other braces are left as they are.

    Raises:
        WorkflowDataError: a ``{key}`` names a missing state key.
    """

    def fill(match: re.Match[str]) -> str:
        key, optional = match.group(1), match.group(2)
        if key not in state:
            if optional:
                return ""
            raise WorkflowDataError(f"The instruction uses {{{key}}}, which is not in session state.", key=key)
        value = state[key]
        if value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)

    return _TEMPLATE.sub(fill, template)


class LlmAgent(ToolCalls, BaseNode):
    """An LLM agent node (see the module docstring).

    Args:
        name: the agent's name (author of its events).
        model: a :class:`~engine.Model`; None uses the runner's default model.
        instruction: a template (``{key}``, ``{key?}``) or a function ``(Context) -> str``.
        tools: functions, tools, nodes or workflows (wrapped as node tools); not agents.
        output_key: state key that receives the final output.
        output_schema: pydantic model, type or JSON Schema of a JSON final answer (and of
            ``finish_task``'s arguments in task mode).
        mode: ``"single_turn"``, ``"chat"`` or ``"task"``; None picks ``single_turn`` inside a
            workflow and ``chat`` elsewhere.
        input_schema: validates the agent's input when it is the root of a session.
        compaction: a :class:`~engine.Compaction` that summarises older turns of the model's
            context and never drops a pending call (None: the whole context is sent).
        handoffs: names of agents this one may hand the conversation to. The model gets a
            ``transfer_to_agent(agent_name)`` tool; a transfer (once no call is pending) ends
            the activation with route = the target's name and ``actions.transferToAgent`` on
            the response event (ADK). :class:`~engine.HandoffGroup` runs the target next; in a
            Workflow a route dict can do the same.
        sub_agents: task-mode agents this one delegates to: the model gets a tool named after
            each, which runs the sub-agent until it finishes its task (it may talk with the user
            meanwhile) and returns its result (:mod:`engine._task_tool`, ADK 2.13).
        parallel_worker: in a workflow, run the agent once per item of a list input, as
            ``@node(parallel_worker=True)`` does (:class:`~engine.ParallelWorker`), at most
            ``max_parallel_workers`` at a time.
    """

    composite = True
    authors_own_events = True

    def __init__(
        self,
        name: str,
        *,
        model: Model | None = None,
        instruction: Any = "",
        description: str = "",
        tools: list[Any] | tuple[Any, ...] = (),
        output_key: str | None = None,
        output_schema: Any = None,
        mode: str | None = None,
        input_schema: Any = None,
        compaction: Compaction | None = None,
        handoffs: list[str] | tuple[str, ...] = (),
        parallel_worker: bool = False,
        max_parallel_workers: int | None = None,
        sub_agents: list[LlmAgent] | tuple[LlmAgent, ...] = (),
    ) -> None:
        super().__init__(name=name, description=description, rerun_on_resume=True, input_schema=input_schema)
        self.parallel_worker = parallel_worker
        self.max_parallel_workers = max_parallel_workers
        if mode not in (None, "single_turn", "chat", "task"):
            raise ConfigurationError(f"Agent {name}: mode must be 'single_turn', 'chat' or 'task'.")
        self.model = model
        self.instruction = instruction
        self.sub_agents: list[LlmAgent] = list(sub_agents)
        self.tools: list[BaseTool] = [as_tool(t) for t in tools] + [TaskAgentTool(a) for a in self.sub_agents]
        self._tools = {t.name: t for t in self.tools}
        if len(self._tools) != len(self.tools):
            raise ConfigurationError(f"Agent {name}: two tools share a name.")
        self.output_key = output_key
        self.output_schema = output_schema
        self._output_json = schema_to_json(output_schema)
        self._output_adapter: TypeAdapter[Any] | None = (
            TypeAdapter(output_schema) if output_schema is not None and not isinstance(output_schema, dict) else None
        )
        self.mode = mode
        self.compaction = compaction
        self.handoffs: list[str] = list(handoffs)
        if name in self.handoffs or TRANSFER_TO_AGENT in self._tools:
            raise ConfigurationError(f"Agent {name}: it cannot hand off to itself or define {TRANSFER_TO_AGENT}.")

    def tool(self, name: str) -> BaseTool | None:
        """The tool called ``name``, if the agent has it."""
        return self._tools.get(name)

    def _mode(self, ctx: Context) -> str:
        if self.mode:
            return self.mode
        return "single_turn" if ctx.parent is not None else "chat"

    def snapshot(self, ctx: Context) -> Any:
        return ctx.saved.to_json(self) if isinstance(ctx.saved, AgentRun) else ctx.saved

    async def execute(self, ctx: Context) -> Outcome:
        try:
            return await self._execute(ctx)
        except Exception as exc:
            return Outcome.failed(exc)

    # -- the loop ----------------------------------------------------------------------------

    async def _execute(self, ctx: Context) -> Outcome:
        mode = self._mode(ctx)
        if mode == "task":
            ctx.isolation_scope = ctx.isolation_scope or ctx.node_path  # a sub-agent's: its call id
        cut_off: FunctionCall | None = None
        if ctx.saved is None:
            run = AgentRun(transcript=None if mode == "chat" else self._seed(ctx), model_due=True)
            ctx.saved = run
        else:
            run = AgentRun.from_json(ctx.saved)
            ctx.saved = run
            # A checkpoint only pauses between batches: calls left to do were cut off by a dead run.
            cut_off = run.batch.todo[0] if run.batch is not None and run.batch.todo else None
            if await self._apply(ctx, run):
                run.model_due = True
        # ``run.model_due`` is in the checkpoint: a run that died between a batch (or an answer)
        # and the model turn it calls for makes that turn on recovery.
        if run.batch is not None:
            batch_due, finished = await self._run_batch(ctx, run, cut_off=cut_off)
            if finished is not NOT_FINISHED:
                return Outcome.completed(finished)
            run.model_due = run.model_due or batch_due
        if run.transfer and not run.pending:
            return Outcome.completed(None, route=run.transfer)
        while run.model_due:
            content = await self._model_turn(ctx, run, mode)
            calls = content.function_calls()
            if not calls:
                if mode == "task":
                    run.awaiting_message = True
                    await ctx.commit()
                    return Outcome.waiting(run.interrupt_ids(), awaiting_message=True)
                if run.pending:
                    return Outcome.waiting(run.interrupt_ids(), awaiting_message=run.awaits_message())
                return Outcome.completed(self._final_output(content))
            run.batch = Batch(todo=list(calls))
            run.model_due, finished = await self._run_batch(ctx, run)
            if finished is not NOT_FINISHED:
                return Outcome.completed(finished)
            if run.transfer and not run.pending:
                return Outcome.completed(None, route=run.transfer)
        if run.pending or run.awaiting_message:
            return Outcome.waiting(run.interrupt_ids(), awaiting_message=run.awaits_message())
        return Outcome.completed(None)

    def _seed(self, ctx: Context) -> list[Content]:
        value = ctx.node_input
        if value is None:
            return []
        text = value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)
        return [Content.user_text(text)]

    # -- model turns -------------------------------------------------------------------------

    async def _model_turn(self, ctx: Context, run: AgentRun, mode: str) -> Content:
        model = self.model or ctx.session.model
        if model is None:
            raise ConfigurationError(f"Agent {self.name} has no model and the runner has no default model.")
        instruction = (
            self.instruction(ctx) if callable(self.instruction) else render_instruction(self.instruction, ctx.state)
        )
        declarations = [t.declaration() for t in self.tools]
        if self.handoffs:
            declarations.append(
                {
                    "name": TRANSFER_TO_AGENT,
                    "description": "Hand the conversation to another agent, who answers the customer next.",
                    "parameters": {
                        "type": "object",
                        "properties": {"agent_name": {"type": "string", "enum": list(self.handoffs)}},
                        "required": ["agent_name"],
                    },
                }
            )
        if mode == "task":
            declarations.append(
                {
                    "name": FINISH_TASK,
                    "description": "Call when the task is done, with its result.",
                    "parameters": self._finish_task_parameters(),
                }
            )
        request = LlmRequest(
            agent_name=self.name,
            instruction=instruction,
            contents=await self._contents(ctx, run),
            tools=declarations,
            output_schema=self._output_json if mode != "task" else None,
        )
        event_id = new_id()
        final: Content | None = None
        run.model_due = True  # stored with the flush: a run resuming here calls the model again
        await ctx.session.commit([])
        await ctx.session.flush()  # everything before this call is stored before the model runs
        async for response in model.generate(request):
            if response.partial:
                ctx.stream(Event(id=event_id, author=self.name, content=response.content, partial=True))
            else:
                final = response.content
        if final is None:
            raise ConfigurationError(f"Model {model.name} returned no complete response.")
        if final.role != "model":
            final.role = "model"
        calls = final.function_calls()
        long_running: list[str] = []
        for call in calls:
            call.id = f"adk-{new_id()}"
            tool = self.tool(call.name)
            if tool is not None and tool.is_long_running:
                long_running.append(call.id)
        if not calls and mode == "single_turn":
            output = self._final_output(final)
            node_info = NodeInfo(
                message_as_output=True, output_for=[ctx.node_path, *ctx.output_for] if ctx.parent is not None else None
            )
            if self.output_key:
                ctx.state[self.output_key] = output
        else:
            node_info = NodeInfo()
            if not calls and self.output_key and mode == "chat":
                ctx.state[self.output_key] = self._final_output(final)
        ctx.emit(
            Event(
                id=event_id,
                author=self.name,
                content=final,
                long_running_tool_ids=long_running or None,
                node_info=node_info,
            )
        )
        if run.transcript is not None:
            run.transcript.append(final)
        run.model_due = False  # stored with the model's reply, in one commit
        await ctx.commit()
        return final

    def _finish_task_parameters(self) -> dict[str, Any]:
        """``finish_task``'s arguments: the output schema, wrapped as ``{"result": ...}`` when it is
        not an object (ADK ``agents/llm/task/_finish_task_tool.py``)."""
        schema = self._output_json
        if schema is None:
            return {"type": "object", "properties": {}}
        if schema.get("type") == "object":
            return schema
        inner = dict(schema)
        defs = inner.pop("$defs", None)
        wrapped: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
        if defs:
            wrapped["$defs"] = defs
        return wrapped

    def _finish_task_result(self, args: dict[str, Any]) -> Any:
        """The task's result from ``finish_task``'s arguments (unwrapped, see above), validated."""
        schema = self._output_json
        if schema is not None and schema.get("type") != "object" and "result" in args:
            return self._check_output(args["result"])
        return self._check_output(args)

    def _final_output(self, content: Content) -> Any:
        text = content.text
        if self._output_json is None:
            return text
        try:
            value = json_reply(text)
        except ValueError as exc:
            raise WorkflowDataError(f"Agent {self.name}: the model's answer is not JSON.") from exc
        return self._check_output(value)

    def _check_output(self, value: Any) -> Any:
        if self._output_adapter is not None:
            try:
                return to_jsonable(self._output_adapter.validate_python(value))
            except ValidationError as exc:
                raise WorkflowDataError(
                    f"Agent {self.name}: output does not match its output_schema.",
                    errors=[{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()],
                ) from exc
        if self._output_json is not None:
            errors = validate_json(value, self._output_json)
            if errors:
                raise WorkflowDataError(f"Agent {self.name}: output does not match its output_schema.", errors=errors)
        return value

    async def _contents(self, ctx: Context, run: AgentRun) -> list[Content]:
        if run.transcript is not None:
            contents = list(run.transcript)
        else:
            contents = await conversation(ctx, self.name)
        if self.compaction is not None:
            contents = self.compaction.apply(contents, set(ctx.session.registry) | set(run.pending))
        return contents or [Content.user_text("Begin.")]
