"""Running one activation of a leaf node: yields, interrupts, confirmation, retry and timeout."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

from ._auth import AUTH_FUNCTION, auth_interrupt_id, auth_message
from ._context import Context, Outcome
from ._dynamic import ChildWaiting, settle_children
from ._errors import ConfigurationError, NodeTimeoutError
from ._events import Content, Event, EventActions, FunctionCall, Part
from ._interrupts import CONFIRMATION_SCHEMA, InterruptKind, RequestInput
from ._node import BaseNode, FunctionNode, to_jsonable

logger = logging.getLogger("engine")

__all__ = ["DECLINED_ROUTE", "EFFECT_MAY_HAVE_RUN", "confirmation_id", "drive_leaf"]

EFFECT_MAY_HAVE_RUN = "effectMayHaveRun"
"""Key of :attr:`Event.custom_metadata` on the event a leaf emits when it runs again after a
worker died while it ran (``ctx.recovered``): its effect may have run once already."""

DECLINED_ROUTE = "declined"
"""Route emitted by a ``require_confirmation`` node whose run a person declined."""


async def drive_leaf(node: BaseNode, ctx: Context) -> Outcome:
    """Run ``node.run(ctx)`` to an outcome, applying the node's options.

    Exceptions from the node (after retries) come back as a failed outcome, never raised.
    """
    if ctx.recovered:
        logger.warning("Node %s runs again after a dead run: its effect may have run", ctx.node_path)
        ctx.emit(Event(custom_metadata={EFFECT_MAY_HAVE_RUN: True}))
    await ctx.session.flush()  # everything before this node is stored before its code runs
    try:
        if not ctx.input_valid:
            ctx.node_input = node.validate_input(ctx.node_input)
        gate = _confirmation_gate(node, ctx) if node.require_confirmation else None
        if gate is None and node.auth_config is not None:
            gate = _auth_gate(node, ctx)
        if gate is not None:
            return gate
        attempt = 1
        retry = node.retry_config
        while True:
            ctx.attempt_count = attempt
            try:
                if node.timeout is not None:
                    try:
                        async with asyncio.timeout(node.timeout):
                            output = await _consume(node, ctx)
                    except TimeoutError as exc:
                        raise NodeTimeoutError(
                            f"Node {node.name} ran longer than its timeout of {node.timeout} s."
                        ) from exc
                else:
                    output = await _consume(node, ctx)
                break
            except Exception as exc:
                if retry is None or attempt >= retry.max_attempts or not isinstance(exc, retry.exceptions):
                    raise
                delay = retry.delay(attempt)
                logger.warning(
                    "Node %s failed (attempt %d): %r; retrying in %.3f s", ctx.node_path, attempt, exc, delay
                )
                _close_attempt(ctx, exc)
                attempt += 1
                await asyncio.sleep(delay)
    except Exception as exc:
        return Outcome.failed(exc)
    if ctx.interrupt_ids:
        ctx.flush_state()
        return Outcome.waiting(list(ctx.interrupt_ids))
    ctx.flush_state()
    return Outcome("completed", output, ctx.route)


def _close_attempt(ctx: Context, exc: BaseException) -> None:
    """End a failed attempt as ADK 2.13 does (``workflow/_node_runner.py``): its events stay and an
    error event follows (``errorCode`` = the exception's class name, ``errorMessage`` = its text).
    Interrupts it opened are dropped with their request events: only the attempt that succeeds asks."""
    dropped = set(ctx.interrupt_ids)
    carried: dict[str, Any] = {}  # state writes that travelled on a dropped request event
    for wire in dropped:
        ctx.session.discard_interrupt(wire)
    if dropped:
        kept = []
        for event in ctx.pending:
            if {c.id for c in event.function_calls()} & dropped:
                carried.update(event.state_delta)
            else:
                kept.append(event)
        ctx.pending[:] = kept
    ctx.interrupt_ids.clear()
    ctx.route = None
    ctx.emit(Event(error_code=type(exc).__name__, error_message=str(exc), state=carried or None))


class _Output:
    """What a node's items add up to: events emitted, interrupts opened, at most one output."""

    __slots__ = ("has_output", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.has_output = False

    def take(self, node: BaseNode, ctx: Context, item: Any) -> None:
        if item is None:
            return
        if isinstance(item, Event):
            if item.partial:  # a streamed piece (ADK ``partial=True``): to the listener, never stored
                ctx.stream(item)
                return
            route = item.route
            if route is not None:
                ctx.route = route
            if item.output is not None:
                item.output = node.validate_output(item.output)
                self.value, self.has_output = item.output, True
                if ctx.output_claimed:  # a use_as_output child's event carries it already
                    item.output = None
                    if item.content is None and item.actions is None:
                        return
            ctx.emit(item)
        elif isinstance(item, RequestInput):
            ctx.session.open_interrupt(ctx, item, kind=InterruptKind.INPUT)
        else:
            if self.has_output:
                raise ConfigurationError(f"Node {node.name} produced more than one output.")
            self.value, self.has_output = node.validate_output(item), True
            if not ctx.output_claimed:  # else a use_as_output child's event carries it already
                ctx.emit(Event(output=self.value))


async def _consume(node: BaseNode, ctx: Context) -> Any:
    out = _Output()
    try:
        if isinstance(node, FunctionNode) and node.returns_once:
            # Called here, not through ``run``: no async generator to drive (the event loop tracks
            # every one it sees, a cost on each node run), no coroutine for a plain function.
            result = node.func(**node.bind(ctx))
            out.take(node, ctx, await result if node.is_coroutine else result)
            return out.value
        async for item in node.run(ctx):
            out.take(node, ctx, item)
    except ChildWaiting:  # a child started with ctx.run_node waits: so does this node,
        await settle_children(ctx)  # once the children still running beside it have finished
        return None
    return out.value


def confirmation_id(node_path: str) -> str:
    """The interrupt id of a node's confirmation request (ADK ``_workflow_hitl_utils.py``)."""
    return f"wf_tool_confirmation:{node_path}"


def _gate_arguments(node: BaseNode, ctx: Context) -> dict[str, Any]:
    if isinstance(node, FunctionNode):
        kwargs = node.bind(ctx)
        return {k: to_jsonable(v) for k, v in kwargs.items() if v is not ctx}
    return {"node_input": ctx.node_input}


def _needs_confirmation(node: BaseNode, ctx: Context, args: dict[str, Any]) -> bool:
    """Evaluate ``require_confirmation``: a bool, or a predicate bound by parameter name.

    A predicate's parameters take the node's bound arguments, ``node_input``, ``ctx`` and state
    keys by name (as ADK does); a predicate whose one parameter matches none of them gets
    ``node_input``.
    """
    if not callable(node.require_confirmation):
        return bool(node.require_confirmation)
    required: Callable[..., Any] = node.require_confirmation
    params = list(inspect.signature(required).parameters.values())
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return bool(required(**args, node_input=ctx.node_input, ctx=ctx))
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.name == "ctx":
            kwargs["ctx"] = ctx
        elif p.name == "node_input":
            kwargs["node_input"] = ctx.node_input
        elif p.name in args:
            kwargs[p.name] = args[p.name]
        elif p.name in ctx.state:
            kwargs[p.name] = ctx.state[p.name]
        elif len(params) == 1:
            kwargs[p.name] = ctx.node_input
    return bool(required(**kwargs))


def _confirmation_gate(node: BaseNode, ctx: Context) -> Outcome | None:
    """Ask for approval before a ``require_confirmation`` node runs; skip it on a decline.

    The request is ADK's: interrupt id ``wf_tool_confirmation:<node path>``, payload
    ``{"tool_name", "args"}``, answer ``{"confirmed": bool}``. A decline is enforced here: the
    node does not run; it outputs ``{"error": ...}`` and emits route ``"declined"``.
    """
    if not node.require_confirmation:
        return None
    wire = confirmation_id(ctx.node_path)
    answer = ctx.resume_inputs.get(wire)
    if answer is None:
        args = _gate_arguments(node, ctx)
        if not _needs_confirmation(node, ctx, args):
            return None
        ctx.session.open_interrupt(
            ctx,
            RequestInput(
                interrupt_id=wire,
                message=f"Please approve or reject the tool call {node.name}().",
                payload={"tool_name": node.name, "args": args},
                response_schema=CONFIRMATION_SCHEMA,
            ),
            kind=InterruptKind.CONFIRMATION,
        )
        return Outcome.waiting(list(ctx.interrupt_ids))
    if answer.get("confirmed"):
        return None
    output = {"error": f"The run of {node.name} was declined."}
    ctx.emit(Event(output=output, actions=EventActions(route=DECLINED_ROUTE)))
    return Outcome.completed(output, DECLINED_ROUTE)


def _auth_gate(node: BaseNode, ctx: Context) -> Outcome | None:
    """Ask for a credential before a node with an ``auth_config`` runs, while none was given
    (ADK ``workflow/_function_node.py``; see :mod:`engine._auth`)."""
    config = node.auth_config
    if config is None or ctx.get_auth_response(config) is not None:
        return None

    wire = auth_interrupt_id(ctx.node_path)
    message = auth_message(config)
    request = RequestInput(interrupt_id=wire, message=message, payload={"authConfig": config.to_wire()})
    wire = ctx.session.open_interrupt(ctx, request, kind=InterruptKind.INPUT, function_name=AUTH_FUNCTION, emit=False)
    args = {"functionCallId": wire, "authConfig": config.to_wire(), "message": message}
    call = FunctionCall(id=wire, name=AUTH_FUNCTION, args=args)
    ctx.emit(Event(content=Content(role="model", parts=[Part(function_call=call)]), long_running_tool_ids=[wire]))
    return Outcome.waiting(list(ctx.interrupt_ids))
