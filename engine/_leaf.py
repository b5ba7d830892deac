"""Running one activation of a leaf node: yields, interrupts, confirmation, retry and timeout."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ._context import Context, Outcome
from ._errors import ConfigurationError, NodeTimeoutError
from ._events import Event
from ._interrupts import CONFIRMATION_SCHEMA, InterruptKind, RequestInput
from ._node import BaseNode

logger = logging.getLogger("engine")

__all__ = ["DECLINED_ROUTE", "drive_leaf"]

DECLINED_ROUTE = "declined"
"""Route emitted by a ``require_confirmation`` node whose run a person declined."""


async def drive_leaf(node: BaseNode, ctx: Context) -> Outcome:
    """Run ``node.run(ctx)`` to an outcome, applying the node's options.

    Exceptions from the node (after retries) come back as a failed outcome, never raised.
    """
    try:
        ctx.node_input = node.validate_input(ctx.node_input)
        gate = _confirmation_gate(node, ctx)
        if gate is not None:
            return gate
        attempt = 1
        retry = node.retry_config
        while True:
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
                ctx.pending.clear()
                ctx.state.delta.clear()
                ctx.interrupt_ids.clear()
                ctx.route = None
                attempt += 1
                await asyncio.sleep(delay)
    except Exception as exc:
        return Outcome.failed(exc)
    if ctx.interrupt_ids:
        ctx.flush_state()
        return Outcome.waiting(list(ctx.interrupt_ids))
    ctx.flush_state()
    return Outcome.completed(output, ctx.route)


async def _consume(node: BaseNode, ctx: Context) -> Any:
    output: Any = None
    has_output = False
    async for item in node.run(ctx):
        if item is None:
            continue
        if isinstance(item, Event):
            if item.route is not None:
                ctx.route = item.route
            if item.output is not None:
                item.output = node.validate_output(item.output)
                output, has_output = item.output, True
            ctx.emit(item)
        elif isinstance(item, RequestInput):
            ctx.session.open_interrupt(ctx, item, kind=InterruptKind.INPUT)
        else:
            if has_output:
                raise ConfigurationError(f"Node {node.name} produced more than one output.")
            output, has_output = node.validate_output(item), True
            ctx.emit(Event(output=output))
    return output


def _confirmation_gate(node: BaseNode, ctx: Context) -> Outcome | None:
    """Ask for approval before a ``require_confirmation`` node runs; skip it on a decline."""
    required = node.require_confirmation
    if not required or (callable(required) and not required(ctx.node_input)):
        return None
    confirmation_id = f"confirm:{ctx.node_path}"
    answer = ctx.resume_inputs.get(confirmation_id)
    if answer is None:
        ctx.session.open_interrupt(
            ctx,
            RequestInput(
                interrupt_id=confirmation_id,
                message=f"Approve running {node.name}?",
                payload={"node": node.name, "node_input": ctx.node_input},
                response_schema=CONFIRMATION_SCHEMA,
            ),
            kind=InterruptKind.CONFIRMATION,
        )
        return Outcome.waiting(list(ctx.interrupt_ids))
    if answer.get("confirmed"):
        return None
    ctx.emit(Event(message=f"{node.name} was declined.", route=DECLINED_ROUTE))
    return Outcome.completed(None, DECLINED_ROUTE)
