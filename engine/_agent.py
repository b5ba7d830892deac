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
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._compaction import Compaction
from ._context import Context, Outcome
from ._errors import ConfigurationError, WorkflowDataError
from ._events import (
    REQUEST_CONFIRMATION_FUNCTION,
    REQUEST_INPUT_FUNCTION,
    Content,
    Event,
    EventActions,
    FunctionCall,
    FunctionResponse,
    NodeInfo,
    Part,
    new_id,
)
from ._interrupts import InterruptKind, schema_to_json
from ._models import LlmRequest, Model
from ._node import BaseNode, to_jsonable
from ._node_tool import NodeTool
from ._slot import Slot
from ._store import InterruptRecord
from ._tools import (
    CONFIRMATION_REQUIRED_ERROR,
    BaseTool,
    FunctionTool,
    ToolArgumentError,
    ToolContext,
    as_tool,
    request_input_tool,
)

__all__ = ["FINISH_TASK", "LlmAgent", "render_instruction"]

FINISH_TASK = "finish_task"
TASK_COMPLETED = {"result": "Task completed."}
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


def _response(call: FunctionCall, response: Any) -> Part:
    body = response if isinstance(response, dict) else {"result": response}
    return Part(function_response=FunctionResponse(id=call.id, name=call.name, response=to_jsonable(body)))


def _confirmation_hint(tool: BaseTool) -> str:
    return (
        f"Please approve or reject the tool call {tool.name}() by responding with a FunctionResponse "
        "with an expected ToolConfirmation payload."
    )


@dataclass
class _Pending:
    """A tool call waiting: on a confirmation, an answer, a long-running result or a child node."""

    kind: str
    call: FunctionCall
    interrupt: str = ""
    slot: Slot | None = None

    def to_json(self, tool: BaseTool | None) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "call": self.call.model_dump(exclude_none=True)}
        if self.interrupt:
            data["interrupt"] = self.interrupt
        if self.slot is not None and isinstance(tool, NodeTool):
            data["slot"] = self.slot.to_json(tool.node)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Pending:
        slot = Slot.from_json(data["slot"]) if "slot" in data else None
        return cls(data["kind"], FunctionCall.model_validate(data["call"]), data.get("interrupt", ""), slot)

    def interrupt_ids(self) -> list[str]:
        if self.slot is not None:
            return list(self.slot.interrupts)
        return [self.interrupt]


@dataclass
class _Batch:
    """Responses gathered while a model turn's calls run (kept across a crash)."""

    todo: list[FunctionCall] = field(default_factory=list)
    responses: list[Part] = field(default_factory=list)
    confirmations: list[Part] = field(default_factory=list)
    requested: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    skip: bool = False
    finished: Any = None
    has_finished: bool = False


@dataclass
class _AgentRun:
    transcript: list[Content] | None
    pending: dict[str, _Pending] = field(default_factory=dict)
    batch: _Batch | None = None
    awaiting_message: bool = False

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
        if self.awaiting_message:
            data["awaiting_message"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _AgentRun:
        transcript = data.get("transcript")
        run = cls(
            transcript=[Content.model_validate(c) for c in transcript] if transcript is not None else None,
            pending={cid: _Pending.from_json(p) for cid, p in data.get("pending", {}).items()},
            awaiting_message=data.get("awaiting_message", False),
        )
        if "batch" in data:
            b = data["batch"]
            run.batch = _Batch(
                todo=[FunctionCall.model_validate(c) for c in b["todo"]],
                responses=[Part.model_validate(p) for p in b["responses"]],
                confirmations=[Part.model_validate(p) for p in b["confirmations"]],
                requested=b["requested"],
                state=b["state"],
                skip=b["skip"],
                finished=b["finished"],
                has_finished=b["has_finished"],
            )
        return run

    def interrupt_ids(self) -> list[str]:
        return [wire for p in self.pending.values() for wire in p.interrupt_ids()]


class LlmAgent(BaseNode):
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
    ) -> None:
        super().__init__(name=name, description=description, rerun_on_resume=True, input_schema=input_schema)
        if mode not in (None, "single_turn", "chat", "task"):
            raise ConfigurationError(f"Agent {name}: mode must be 'single_turn', 'chat' or 'task'.")
        self.model = model
        self.instruction = instruction
        self.tools: list[BaseTool] = [as_tool(t) for t in tools]
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

    def tool(self, name: str) -> BaseTool | None:
        """The tool called ``name``, if the agent has it."""
        return self._tools.get(name)

    def _mode(self, ctx: Context) -> str:
        if self.mode:
            return self.mode
        return "single_turn" if ctx.parent is not None else "chat"

    def snapshot(self, ctx: Context) -> Any:
        return ctx.saved.to_json(self) if isinstance(ctx.saved, _AgentRun) else ctx.saved

    async def execute(self, ctx: Context) -> Outcome:
        try:
            return await self._execute(ctx)
        except Exception as exc:
            return Outcome.failed(exc)

    # -- the loop ----------------------------------------------------------------------------

    async def _execute(self, ctx: Context) -> Outcome:
        mode = self._mode(ctx)
        if mode == "task":
            ctx.isolation_scope = ctx.node_path
        if ctx.saved is None:
            run = _AgentRun(transcript=None if mode == "chat" else self._seed(ctx))
            ctx.saved = run
            model_due = True
        else:
            run = _AgentRun.from_json(ctx.saved)
            ctx.saved = run
            model_due = await self._apply(ctx, run)
        if run.batch is not None:
            batch_due, finished = await self._run_batch(ctx, run)
            if finished is not _NOT_FINISHED:
                return Outcome.completed(finished)
            model_due = model_due or batch_due
        while model_due:
            content = await self._model_turn(ctx, run, mode)
            calls = content.function_calls()
            if not calls:
                if mode == "task":
                    run.awaiting_message = True
                    await ctx.commit()
                    return Outcome.waiting(run.interrupt_ids(), awaiting_message=True)
                if run.pending:
                    return Outcome.waiting(run.interrupt_ids())
                return Outcome.completed(self._final_output(content))
            run.batch = _Batch(todo=list(calls))
            model_due, finished = await self._run_batch(ctx, run)
            if finished is not _NOT_FINISHED:
                return Outcome.completed(finished)
        if run.pending or run.awaiting_message:
            return Outcome.waiting(run.interrupt_ids(), awaiting_message=run.awaiting_message)
        return Outcome.completed(None)

    def _seed(self, ctx: Context) -> list[Content]:
        value = ctx.node_input
        if value is None:
            return []
        text = value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False)
        return [Content.user_text(text)]

    # -- model turns -------------------------------------------------------------------------

    async def _model_turn(self, ctx: Context, run: _AgentRun, mode: str) -> Content:
        model = self.model or ctx.session.model
        if model is None:
            raise ConfigurationError(f"Agent {self.name} has no model and the runner has no default model.")
        instruction = (
            self.instruction(ctx) if callable(self.instruction) else render_instruction(self.instruction, ctx.state)
        )
        declarations = [t.declaration() for t in self.tools]
        if mode == "task":
            declarations.append(
                {
                    "name": FINISH_TASK,
                    "description": "Call when the task is done, with its result.",
                    "parameters": self._output_json or {"type": "object", "properties": {}},
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
        async for response in model.generate(request):
            if response.partial:
                ctx.stream(Event(id=event_id, author=self.name, content=response.content, partial=True))
            else:
                final = response.content
        if final is None:
            raise ConfigurationError(f"Model {model.name} returned no complete response.")
        final.role = "model"
        long_running: list[str] = []
        for call in final.function_calls():
            call.id = f"adk-{new_id()}"
            tool = self.tool(call.name)
            if tool is not None and tool.is_long_running:
                long_running.append(call.id)
        event = Event(id=event_id, author=self.name, content=final, long_running_tool_ids=long_running or None)
        if not final.function_calls() and mode == "single_turn":
            output = self._final_output(final)
            event.node_info = NodeInfo(message_as_output=True)
            if ctx.parent is not None:
                event.node_info.output_for = [ctx.node_path, *ctx.output_for]
            if self.output_key:
                ctx.state[self.output_key] = output
        elif not final.function_calls() and self.output_key and mode == "chat":
            ctx.state[self.output_key] = self._final_output(final)
        ctx.emit(event)
        if run.transcript is not None:
            run.transcript.append(final)
        await ctx.commit()
        return final

    def _final_output(self, content: Content) -> Any:
        text = content.text
        if self._output_json is None:
            return text
        raw = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
        try:
            value = json.loads(raw)
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
            from ._interrupts import validate_json

            errors = validate_json(value, self._output_json)
            if errors:
                raise WorkflowDataError(f"Agent {self.name}: output does not match its output_schema.", errors=errors)
        return value

    async def _contents(self, ctx: Context, run: _AgentRun) -> list[Content]:
        if run.transcript is not None:
            contents = list(run.transcript)
        else:
            from ._history import conversation

            contents = await conversation(ctx, self.name)
        if self.compaction is not None:
            contents = self.compaction.apply(contents, set(ctx.session.registry) | set(run.pending))
        return contents or [Content.user_text("Begin.")]

    # -- tool calls --------------------------------------------------------------------------

    async def _run_batch(self, ctx: Context, run: _AgentRun) -> tuple[bool, Any]:
        """Run the batch's remaining calls, then emit the confirmation and response events."""
        batch = run.batch
        assert batch is not None
        while batch.todo:
            call = batch.todo[0]
            await self._run_call(ctx, run, batch, call)
            batch.todo.pop(0)
        if batch.confirmations:
            ids = [p.function_call.id for p in batch.confirmations if p.function_call and p.function_call.id]
            ctx.emit(
                Event(
                    author=self.name,
                    content=Content(role="model", parts=batch.confirmations),
                    long_running_tool_ids=ids,
                )
            )
        if batch.responses:
            actions = EventActions(
                state_delta=batch.state,
                requested_tool_confirmations=batch.requested,
                skip_summarization=True if batch.skip else None,
            )
            event = Event(author=self.name, content=Content(role="user", parts=batch.responses), actions=actions)
            if batch.has_finished:
                event.output = batch.finished
            ctx.emit(event)
            if run.transcript is not None:
                run.transcript.append(Content(role="user", parts=batch.responses))
        run.batch = None
        await ctx.commit()
        if batch.has_finished:
            return False, batch.finished
        return bool(batch.responses) and not batch.skip, _NOT_FINISHED

    async def _run_call(self, ctx: Context, run: _AgentRun, batch: _Batch, call: FunctionCall) -> None:
        if call.name == FINISH_TASK and self._mode(ctx) == "task":
            try:
                batch.finished = self._check_output(call.args)
                batch.has_finished = True
                batch.responses.append(_response(call, TASK_COMPLETED))
            except WorkflowDataError as exc:
                batch.responses.append(_response(call, {"error": exc.message, "details": exc.details}))
            return
        tool = self.tool(call.name)
        if tool is None:
            batch.responses.append(_response(call, {"error": f"Tool {call.name} is not available."}))
            return
        if tool is request_input_tool:
            schema = call.args.get("response_schema")
            self._register(
                ctx,
                run,
                _Pending("input", call, interrupt=call.id or ""),
                kind=InterruptKind.INPUT,
                function_name=REQUEST_INPUT_FUNCTION,
                message=call.args.get("message"),
                schema=schema if isinstance(schema, dict) else None,
            )
            return
        if isinstance(tool, NodeTool):
            try:
                node_input = tool.child_input(call.args)
            except ToolArgumentError as exc:
                batch.responses.append(_response(call, {"error": str(exc), "errors": exc.errors}))
                return
            branch_segment = f"{tool.name}@{call.id}"
            slot = Slot(
                status="running",
                run=call.id or new_id(),
                input=node_input,
                branch=f"{ctx.branch}.{branch_segment}" if ctx.branch else branch_segment,
            )
            await self._run_child(ctx, run, batch, call, tool, slot, fresh=True)
            return
        assert isinstance(tool, FunctionTool)
        try:
            tool.validate_args(call.args)
        except ToolArgumentError as exc:
            batch.responses.append(_response(call, {"error": str(exc)}))
            return
        if tool.needs_confirmation(call.args):
            self._ask_confirmation(ctx, run, batch, call, hint=_confirmation_hint(tool), payload=None, skip=True)
            return
        await self._invoke(ctx, run, batch, call, tool, confirmation=None)

    async def _invoke(
        self,
        ctx: Context,
        run: _AgentRun,
        batch: _Batch,
        call: FunctionCall,
        tool: FunctionTool,
        confirmation: dict[str, Any] | None,
    ) -> None:
        tool_ctx = ToolContext(ctx, call.id or "", confirmation)
        result = await tool.call(call.args, tool_ctx)
        batch.state.update(tool_ctx.state.delta)
        batch.skip = batch.skip or tool_ctx.skip_summarization
        if tool_ctx.confirmation_request is not None and confirmation is None:
            request = tool_ctx.confirmation_request
            self._ask_confirmation(
                ctx, run, batch, call, hint=request["hint"] or _confirmation_hint(tool), payload=request["payload"]
            )
            return
        batch.responses.append(_response(call, result))
        if tool.is_long_running:
            self._register(
                ctx,
                run,
                _Pending("long_running", call, interrupt=call.id or ""),
                kind=InterruptKind.LONG_RUNNING,
                function_name=tool.name,
                message=f"Result of {tool.name}",
                payload={"args": call.args, "interim": to_jsonable(result)},
            )

    def _ask_confirmation(
        self,
        ctx: Context,
        run: _AgentRun,
        batch: _Batch,
        call: FunctionCall,
        *,
        hint: str,
        payload: Any,
        skip: bool = False,
    ) -> None:
        confirmation: dict[str, Any] = {"hint": hint, "confirmed": False}
        if payload is not None:
            confirmation["payload"] = payload
        conf_id = f"adk-{new_id()}"
        original = call.model_dump(exclude_none=True)
        batch.confirmations.append(
            Part(
                function_call=FunctionCall(
                    id=conf_id,
                    name=REQUEST_CONFIRMATION_FUNCTION,
                    args={"originalFunctionCall": original, "toolConfirmation": confirmation},
                )
            )
        )
        batch.responses.append(_response(call, {"error": CONFIRMATION_REQUIRED_ERROR}))
        batch.requested[call.id or ""] = confirmation
        batch.skip = batch.skip or skip
        self._register(
            ctx,
            run,
            _Pending("confirmation", call, interrupt=conf_id),
            kind=InterruptKind.CONFIRMATION,
            function_name=REQUEST_CONFIRMATION_FUNCTION,
            message=hint,
            payload={"tool": call.name, "args": call.args, "payload": payload},
            tool_call=original,
        )

    def _register(
        self,
        ctx: Context,
        run: _AgentRun,
        pending: _Pending,
        *,
        kind: str,
        function_name: str,
        message: str | None,
        schema: dict[str, Any] | None = None,
        payload: Any = None,
        tool_call: dict[str, Any] | None = None,
    ) -> None:
        record = InterruptRecord(
            id=pending.interrupt,
            session_id=ctx.session_id,
            kind=kind,
            path=ctx.node_path,
            local_id=pending.interrupt,
            function_name=function_name,
            branch=ctx.branch,
            message=message,
            payload=payload,
            response_schema=schema,
            tool_call=tool_call or pending.call.model_dump(exclude_none=True),
            invocation_id=ctx.invocation_id,
        )
        ctx.session.register_interrupt(record, ctx)
        run.pending[pending.call.id or ""] = pending

    async def _run_child(
        self,
        ctx: Context,
        run: _AgentRun,
        batch: _Batch,
        call: FunctionCall,
        tool: NodeTool,
        slot: Slot,
        *,
        fresh: bool,
    ) -> None:
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
        )
        slot.bind(child, node, fresh=fresh)
        outcome = await node.execute(child)
        slot.record(node, outcome, ctx.session)
        if outcome.status == "failed":
            raise outcome.error or WorkflowDataError(f"Tool {tool.name} failed.")
        if outcome.status == "waiting":
            run.pending[call.id or ""] = _Pending("node", call, slot=slot)
        else:
            run.pending.pop(call.id or "", None)
            batch.responses.append(_response(call, outcome.output))
        await ctx.commit(child.pending)

    # -- resuming ----------------------------------------------------------------------------

    async def _apply(self, ctx: Context, run: _AgentRun) -> bool:
        """Hand answers and messages to the calls waiting on them; True when the model should run."""
        answers = ctx.resume_inputs
        batch = run.batch = run.batch or _Batch()
        model_due = False
        for call_id, pending in list(run.pending.items()):
            call = pending.call
            if pending.kind == "node" and pending.slot is not None:
                tool = self.tool(call.name)
                assert isinstance(tool, NodeTool)
                verdict = pending.slot.deliver(tool.node, answers, [], ctx.session)
                if verdict == "run":
                    await self._run_child(ctx, run, batch, call, tool, pending.slot, fresh=False)
                elif verdict == "complete":
                    del run.pending[call_id]
                    batch.responses.append(_response(call, pending.slot.answer_output()))
                continue
            if pending.interrupt not in answers:
                continue
            value = answers[pending.interrupt]
            if pending.kind == "confirmation":
                del run.pending[call_id]
                tool = self.tool(call.name)
                if value.get("confirmed") and isinstance(tool, FunctionTool):
                    await self._invoke(ctx, run, batch, call, tool, confirmation=value)
                else:
                    message = tool.decline_message if isinstance(tool, FunctionTool) else "The call was declined."
                    batch.responses.append(_response(call, {"error": message}))
                continue
            # An answer to request_input or a long-running tool: the user's event is the response.
            if pending.interrupt not in ctx.session.registry:
                del run.pending[call_id]
            if run.transcript is not None:
                run.transcript.append(Content(role="user", parts=[_response(call, value)]))
            model_due = True
        if ctx.messages and run.awaiting_message:
            run.awaiting_message = False
            if run.transcript is not None:
                run.transcript.extend(Content.user_text(str(m)) for m in ctx.messages)
            model_due = True
        ctx.resume_inputs, ctx.messages = {}, []
        if not (batch.todo or batch.responses or batch.confirmations):
            run.batch = None
        return model_due


_NOT_FINISHED: Any = object()
