"""An LLM agent's tool calls: running them, asking for confirmations, and resuming them.

Split from :mod:`engine._agent` (the model loop). A model turn's calls run as a *batch* whose
progress (responses so far, confirmations asked, state written) is kept in the agent's
checkpoint, so a crash mid-batch never runs a finished call again. A call waits on a
confirmation (asked in :mod:`engine._call_requests`), an answer to ``request_input``, a
long-running tool's result, or a node tool's child that paused; :meth:`ToolCalls._apply` hands
answers to the calls waiting on them on resume.
A declined confirmation is enforced here: the tool does not run and the model gets
``{"error": decline_message}``; so is an approval bound to other arguments than the call's
(:mod:`engine._digest`): the tool runs with the approved (or edited) arguments only, or not at all.
"""

from __future__ import annotations

import logging
from typing import Any

from ._agent_run import AgentRun, Batch, Pending
from ._call_requests import ask_confirmation, confirmation_hint, register
from ._context import Context
from ._digest import approval_metadata, approved_args, tool_confirmation
from ._errors import WorkflowDataError
from ._events import (
    REQUEST_INPUT_FUNCTION,
    Content,
    Event,
    EventActions,
    FunctionCall,
    FunctionResponse,
    Part,
    new_id,
)
from ._interrupts import InterruptKind
from ._leaf import EFFECT_MAY_HAVE_RUN
from ._node import to_jsonable
from ._node_tool import NodeTool
from ._slot import Slot
from ._task_tool import TaskAgentTool, run_task
from ._tools import (
    ARGS_CHANGED_ERROR,
    DECLINED_ERROR,
    BaseTool,
    FunctionTool,
    ToolArgumentError,
    ToolContext,
    request_input_tool,
)

logger = logging.getLogger("engine")

__all__ = ["FINISH_TASK", "NOT_FINISHED", "TASK_COMPLETED", "TRANSFER_TO_AGENT", "ToolCalls"]

TRANSFER_TO_AGENT = "transfer_to_agent"
"""The tool an agent with ``handoffs`` calls to hand the conversation to another agent (ADK's name)."""
FINISH_TASK = "finish_task"
"""The tool a task-mode agent calls with its result."""
TASK_COMPLETED = {"result": "Task completed."}
NOT_FINISHED: Any = object()
"""Sentinel: a batch did not finish the task."""


def _response(call: FunctionCall, response: Any) -> Part:
    body = response if isinstance(response, dict) else {"result": response}
    return Part(function_response=FunctionResponse(id=call.id, name=call.name, response=to_jsonable(body)))


class ToolCalls:
    """The tool-call half of :class:`~engine.LlmAgent` (a mixin; see the module docstring)."""

    name: str
    handoffs: list[str]

    def tool(self, name: str) -> BaseTool | None:
        raise NotImplementedError

    def _mode(self, ctx: Context) -> str:
        raise NotImplementedError

    def _check_output(self, value: Any) -> Any:
        raise NotImplementedError

    def _finish_task_result(self, args: dict[str, Any]) -> Any:
        raise NotImplementedError

    # -- tool calls --------------------------------------------------------------------------

    async def _run_batch(self, ctx: Context, run: AgentRun, *, cut_off: FunctionCall | None = None) -> tuple[bool, Any]:
        """Run the batch's remaining calls, then emit the confirmation and response events.

        ``cut_off`` is the call a dead run may have been running: a function tool runs it again
        flagged (``tool_context.recovered`` and an ``effectMayHaveRun`` event).
        """
        batch = run.batch
        assert batch is not None
        while batch.todo:
            call = batch.todo[0]
            await self._run_call(ctx, run, batch, call, recovered=call is cut_off)
            if batch.todo and batch.todo[0] is call:  # a node tool's call left the list when its child started
                batch.todo.pop(0)
            await ctx.commit()  # written before the next call runs: a finished call never runs again
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
                transfer_to_agent=batch.transfer,
            )
            event = Event(author=self.name, content=Content(role="user", parts=batch.responses), actions=actions)
            if batch.has_finished:
                event.output = batch.finished
            ctx.emit(event)
            if run.transcript is not None:
                run.transcript.append(Content(role="user", parts=batch.responses))
        run.batch = None
        if batch.transfer:
            run.transfer = batch.transfer
        answered = (bool(batch.responses) and not batch.skip) or batch.delegated
        due = answered and not batch.has_finished and not run.transfer
        run.model_due = run.model_due or due  # stored with the batch's end, in one commit
        await ctx.commit()
        if batch.has_finished:
            return False, batch.finished
        if run.transfer:
            return False, NOT_FINISHED  # the conversation moves on to another agent
        return due, NOT_FINISHED

    async def _run_call(
        self, ctx: Context, run: AgentRun, batch: Batch, call: FunctionCall, *, recovered: bool = False
    ) -> None:
        if call.name == FINISH_TASK and self._mode(ctx) == "task":
            try:
                batch.finished = self._finish_task_result(call.args)
                batch.has_finished = True
                batch.responses.append(_response(call, TASK_COMPLETED))
            except WorkflowDataError as exc:
                batch.responses.append(_response(call, {"error": exc.message, "details": exc.details}))
            return
        if call.name == TRANSFER_TO_AGENT and self.handoffs:
            target = call.args.get("agent_name")
            if target in self.handoffs and not (batch.transfer or run.transfer):
                batch.transfer = str(target)
                batch.responses.append(_response(call, {"result": f"Transferred to {target}."}))
            else:
                allowed = ", ".join(self.handoffs)
                batch.responses.append(_response(call, {"error": f"Transfer to one of: {allowed} (once per turn)."}))
            return
        tool = self.tool(call.name)
        if tool is None:
            batch.responses.append(_response(call, {"error": f"Tool {call.name} is not available."}))
            return
        if tool is request_input_tool:
            schema = call.args.get("response_schema")
            register(
                ctx,
                run,
                Pending("input", call, interrupt=call.id or ""),
                kind=InterruptKind.INPUT,
                function_name=REQUEST_INPUT_FUNCTION,
                message=call.args.get("message"),
                schema=schema if isinstance(schema, dict) else None,
            )
            return
        if isinstance(tool, TaskAgentTool):
            try:
                task_input = tool.child_input(call.args)
            except ToolArgumentError as exc:
                batch.responses.append(_response(call, {"error": str(exc), "errors": exc.errors}))
                return
            slot = Slot(status="running", run=call.id or new_id(), input=task_input, branch=ctx.branch)
            if await run_task(ctx, run, call, tool, slot, fresh=True):
                batch.delegated = True
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
            # From here the call is a started child: every checkpoint written while it runs holds
            # its progress, and a run that dies resumes the child instead of starting it again.
            run.pending[call.id or ""] = Pending("node", call, slot=slot)
            batch.todo.pop(0)
            await self._run_child(ctx, run, batch, call, tool, slot, fresh=True)
            return
        assert isinstance(tool, FunctionTool)
        try:
            tool.validate_args(call.args)
        except ToolArgumentError as exc:
            batch.responses.append(_response(call, {"error": str(exc)}))
            return
        if tool.needs_confirmation(call.args):
            ask_confirmation(ctx, run, batch, call, tool, hint=confirmation_hint(tool), payload=None, skip=True)
            return
        await self._invoke(ctx, run, batch, call, tool, confirmation=None, recovered=recovered)

    async def _invoke(
        self,
        ctx: Context,
        run: AgentRun,
        batch: Batch,
        call: FunctionCall,
        tool: FunctionTool,
        confirmation: dict[str, Any] | None,
        *,
        recovered: bool = False,
    ) -> None:
        tool_ctx = ToolContext(ctx, call.id or "", confirmation, turn_state=batch.state)
        if recovered:
            tool_ctx.recovered = True
            logger.warning(
                "Tool call %s of %s runs again after a dead run: its effect may have run", call.id, ctx.node_path
            )
            ctx.emit(Event(author=self.name, custom_metadata={EFFECT_MAY_HAVE_RUN: True, "functionCallId": call.id}))
        await ctx.session.flush()  # everything before this call is stored before the tool acts
        result = await tool.call(call.args, tool_ctx)
        batch.state.update(tool_ctx.state.delta)
        batch.skip = batch.skip or tool_ctx.skip_summarization
        if tool_ctx.confirmation_request is not None and confirmation is None:
            request = tool_ctx.confirmation_request
            hint = request["hint"] or confirmation_hint(tool)
            ask_confirmation(ctx, run, batch, call, tool, hint=hint, payload=request["payload"])
            return
        batch.responses.append(_response(call, result))
        if tool.is_long_running:
            register(
                ctx,
                run,
                Pending("long_running", call, interrupt=call.id or ""),
                kind=InterruptKind.LONG_RUNNING,
                function_name=tool.name,
                message=f"Result of {tool.name}",
                payload={"args": call.args, "interim": to_jsonable(result)},
                metadata=approval_metadata(call.name, call.args),
            )

    async def _run_child(
        self,
        ctx: Context,
        run: AgentRun,
        batch: Batch,
        call: FunctionCall,
        tool: NodeTool,
        slot: Slot,
        *,
        fresh: bool,
        recovered: bool = False,
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
        child.recovered = recovered and not node.composite  # a composite resumes from its own checkpoint
        slot.bind(child, node, fresh=fresh)
        outcome = await node.execute(child)
        slot.record(node, outcome, ctx.session)
        if outcome.status == "failed":
            raise outcome.error or WorkflowDataError(f"Tool {tool.name} failed.")
        if outcome.status == "waiting":
            run.pending[call.id or ""] = Pending("node", call, slot=slot)
        else:
            run.pending.pop(call.id or "", None)
            batch.responses.append(_response(call, outcome.output))
        await ctx.commit(child.pending)

    # -- resuming ----------------------------------------------------------------------------

    async def _apply(self, ctx: Context, run: AgentRun) -> bool:
        """Hand answers and messages to the calls waiting on them; True when the model should run."""
        answers = ctx.resume_inputs
        batch = run.batch = run.batch or Batch()
        model_due = False
        messages = list(ctx.messages)
        for call_id, pending in list(run.pending.items()):
            call = pending.call
            if pending.kind == "task" and pending.slot is not None:
                task_tool = self.tool(call.name)
                assert isinstance(task_tool, TaskAgentTool)
                taken = len(messages)
                verdict = pending.slot.deliver(task_tool.node, answers, messages, ctx.session)
                if len(messages) < taken:
                    ctx.messages = []  # the sub-agent took the user's message
                if verdict == "run" and await run_task(ctx, run, call, task_tool, pending.slot, fresh=False):
                    model_due = True
                continue
            if pending.kind == "node" and pending.slot is not None:
                tool = self.tool(call.name)
                assert isinstance(tool, NodeTool)
                slot = pending.slot
                # A child still running was cut off by a dead run: it goes on from its checkpoint.
                cut_off = slot.status == "running"
                verdict = "run" if cut_off else slot.deliver(tool.node, answers, [], ctx.session)
                if verdict == "run":
                    await self._run_child(ctx, run, batch, call, tool, slot, fresh=False, recovered=cut_off)
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
                args = approved_args(call.name, call.args, value) if value.get("confirmed") else None
                if value.get("confirmed") and args is None:  # not the call that was approved: never run
                    batch.responses.append(_response(call, {"error": ARGS_CHANGED_ERROR}))
                elif args is not None and isinstance(tool, FunctionTool):
                    approved = call if args is call.args else call.model_copy(update={"args": args})
                    await self._invoke(ctx, run, batch, approved, tool, confirmation=tool_confirmation(value))
                else:
                    message = tool.decline_message if isinstance(tool, FunctionTool) else DECLINED_ERROR
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
