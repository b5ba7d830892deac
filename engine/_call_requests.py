"""What an agent's tool call asks of a person: a confirmation before it runs, or a pending
result, registered as an interrupt of the session.

Split from :mod:`engine._agent_calls` (which runs the calls). A confirmation is ADK's
(``tools/_tool_confirmation.py``, ``flows/llm_flows/functions.py``): an ``adk_request_confirmation``
call ``{"originalFunctionCall", "toolConfirmation": {"hint", "confirmed": false, "payload"?}}``
in the batch's model event, the call's response ``{"error": CONFIRMATION_REQUIRED_ERROR}``, and
``actions.requestedToolConfirmations``. The interrupt record also carries what binds an approval
to the exact call (:func:`engine._digest.approval_metadata`), outside ADK's events.
"""

from __future__ import annotations

from typing import Any

from ._agent_run import AgentRun, Batch, Pending
from ._context import Context
from ._digest import approval_metadata
from ._events import REQUEST_CONFIRMATION_FUNCTION, FunctionCall, FunctionResponse, Part, new_id
from ._interrupts import InterruptKind
from ._store import InterruptRecord
from ._tools import CONFIRMATION_REQUIRED_ERROR, BaseTool

__all__ = ["ask_confirmation", "confirmation_hint", "register"]


def confirmation_hint(tool: BaseTool) -> str:
    """ADK's default hint of a confirmation of ``tool``."""
    return (
        f"Please approve or reject the tool call {tool.name}() by responding with a FunctionResponse "
        "with an expected ToolConfirmation payload."
    )


def ask_confirmation(
    ctx: Context,
    run: AgentRun,
    batch: Batch,
    call: FunctionCall,
    tool: BaseTool | None,
    *,
    hint: str,
    payload: Any,
    skip: bool = False,
) -> None:
    """Ask a person to approve ``call`` of ``tool`` (see the module): the request joins ``batch``
    and its interrupt (id ``adk-<new id>``) waits in ``run``. ``skip``: no model turn on the
    call's error response (``skipSummarization``)."""
    confirmation: dict[str, Any] = {"hint": hint, "confirmed": False}
    if payload is not None:
        confirmation["payload"] = payload
    conf_id = f"adk-{new_id()}"
    original = call.model_dump(exclude_none=True)
    args = {"originalFunctionCall": original, "toolConfirmation": confirmation}
    batch.confirmations.append(
        Part(function_call=FunctionCall(id=conf_id, name=REQUEST_CONFIRMATION_FUNCTION, args=args))
    )
    error = {"error": CONFIRMATION_REQUIRED_ERROR}
    batch.responses.append(Part(function_response=FunctionResponse(id=call.id, name=call.name, response=error)))
    batch.requested[call.id or ""] = confirmation
    batch.skip = batch.skip or skip
    register(
        ctx,
        run,
        Pending("confirmation", call, interrupt=conf_id),
        kind=InterruptKind.CONFIRMATION,
        function_name=REQUEST_CONFIRMATION_FUNCTION,
        message=hint,
        payload={"tool": call.name, "args": call.args, "payload": payload},
        tool_call=original,
        metadata=approval_metadata(call.name, call.args, tool.parameters() if tool else None),
    )


def register(
    ctx: Context,
    run: AgentRun,
    pending: Pending,
    *,
    kind: str,
    function_name: str,
    message: str | None,
    schema: dict[str, Any] | None = None,
    payload: Any = None,
    tool_call: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Open the interrupt ``pending`` waits on (its record; the caller emits its call event) and
    keep ``pending`` in ``run`` under its call's id."""
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
        metadata=metadata or {},
        invocation_id=ctx.invocation_id,
    )
    ctx.session.register_interrupt(record, ctx)
    run.pending[pending.call.id or ""] = pending
