"""LangGraph (1.2+) adapter: a graph's ``interrupt(value)`` answered by a person in the inbox.

A node calls ``interrupt(value)``; the graph pauses in its checkpointer (any: ``InMemorySaver``,
sqlite, Postgres). :class:`ReviewInterrupts` files a review for each interrupt the thread waits
on, waits for the decisions and resumes the thread once with ``Command(resume=…)``: the value
``interrupt()`` then returns is :func:`~reviewconsole_client.outcome` of the review (``{"status":
"approved" | "rejected" | "answered" | …, "answer", "reason", "feedback", "by", "review_id"}``).
Reviews are filed with an idempotency key made of the thread and the interrupt's id, so asking
again (another process, after a crash) finds the same review instead of filing a second one.
:class:`AsyncReviewInterrupts` is the twin for ``ainvoke`` and :class:`~reviewconsole_client.AsyncClient`.

An interrupt's ``value`` becomes the review: a ``dict`` may name review fields (``title``,
``message``, ``payload``, ``response_schema``, ``kind``, ``due_in_seconds``, ``on_expiry``,
``metadata``, ``queue``; other keys go to ``payload``); any other value is the ``payload``, and a
string the ``message`` too. Install with the ``langgraph`` extra.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt

from .aio import AsyncClient
from .client import Client
from .reviews import Review, outcome

__all__ = ["AsyncReviewInterrupts", "ReviewInterrupts", "review_fields"]

Graph = Pregel[Any, Any, Any, Any]  # a compiled graph (StateGraph(...).compile(checkpointer=...))

_FIELDS = frozenset(
    {"title", "message", "queue", "payload", "response_schema", "kind", "due_in_seconds", "on_expiry", "metadata"}
)


def _thread(config: RunnableConfig) -> str:
    thread = (config.get("configurable") or {}).get("thread_id")
    if not thread:
        raise ValueError("the config names no thread: {'configurable': {'thread_id': …}}")
    return str(thread)


def review_fields(interrupt: Interrupt, thread_id: str, defaults: dict[str, Any]) -> dict[str, Any]:
    """The :meth:`Client.ask` arguments for ``interrupt`` of ``thread_id`` (see the module's docstring)."""
    value = interrupt.value
    fields: dict[str, Any] = {"title": defaults.get("title") or "A LangGraph agent asks", **defaults}
    if isinstance(value, dict) and _FIELDS & set(value):
        rest = {k: v for k, v in value.items() if k not in _FIELDS}
        fields.update({k: v for k, v in value.items() if k in _FIELDS})
        if rest and "payload" not in value:
            fields["payload"] = rest
    else:
        fields["payload"] = value
        if isinstance(value, str):
            fields["message"] = value
    fields.setdefault("message", json.dumps(value, default=str)[:10_000])
    fields["metadata"] = {
        **(fields.get("metadata") or {}),
        "langgraph": {"thread_id": thread_id, "interrupt_id": interrupt.id},
    }
    fields["idempotency_key"] = f"langgraph:{thread_id}:{interrupt.id}"[:200]
    return fields


def _resume_value(pending: list[tuple[Interrupt, Review]]) -> Command[Any]:
    if len(pending) == 1:
        return Command(resume=outcome(pending[0][1]))
    return Command(resume={interrupt.id: outcome(review) for interrupt, review in pending})


class ReviewInterrupts:
    """Reviews for a compiled graph's interrupts, filed in ``queue`` through ``client``.

    ``defaults`` are review fields for every interrupt (e.g. ``title``, ``due_in_seconds``); an
    interrupt's own value wins over them. The graph needs a checkpointer (``compile(checkpointer=…)``).
    """

    def __init__(self, client: Client, *, queue: str, **defaults: Any) -> None:
        unknown = set(defaults) - _FIELDS
        if unknown:
            raise TypeError(f"unknown review fields: {sorted(unknown)}")
        self.client = client
        self.defaults = {"queue": queue, **defaults}

    def ask(self, graph: Graph, config: RunnableConfig) -> list[tuple[Interrupt, Review]]:
        """A review per interrupt the thread waits on (filed once per interrupt); ``[]`` when none."""
        thread = _thread(config)
        interrupts = graph.get_state(config).interrupts
        return [(i, self.client.ask(**review_fields(i, thread, self.defaults))) for i in interrupts]

    def resume(self, graph: Graph, config: RunnableConfig, *, timeout: float) -> Any:
        """Wait (``timeout`` seconds in all) for the thread's reviews, then resume it once; the graph's
        output. Raises ``ReviewTimeoutError`` (nothing resumed) and ``ValueError`` when nothing waits."""
        pending = self.ask(graph, config)
        if not pending:
            raise ValueError(f"thread {_thread(config)} waits on no interrupt")
        deadline = time.monotonic() + timeout
        decided = [(i, self.client.wait(r, timeout=max(0.0, deadline - time.monotonic()))) for i, r in pending]
        return graph.invoke(_resume_value(decided), config)

    def run(self, graph: Graph, graph_input: Any, config: RunnableConfig, *, timeout: float) -> Any:
        """``invoke`` the graph, then ask, wait and resume for as long as it interrupts; its final output."""
        result = graph.invoke(graph_input, config)
        while graph.get_state(config).interrupts:
            result = self.resume(graph, config, timeout=timeout)
        return result


class AsyncReviewInterrupts:
    """:class:`ReviewInterrupts` for ``ainvoke`` with an :class:`~reviewconsole_client.AsyncClient`."""

    def __init__(self, client: AsyncClient, *, queue: str, **defaults: Any) -> None:
        unknown = set(defaults) - _FIELDS
        if unknown:
            raise TypeError(f"unknown review fields: {sorted(unknown)}")
        self.client = client
        self.defaults = {"queue": queue, **defaults}

    async def ask(self, graph: Graph, config: RunnableConfig) -> list[tuple[Interrupt, Review]]:
        """A review per interrupt the thread waits on (filed once per interrupt); ``[]`` when none."""
        thread = _thread(config)
        interrupts = (await graph.aget_state(config)).interrupts
        return [(i, await self.client.ask(**review_fields(i, thread, self.defaults))) for i in interrupts]

    async def resume(self, graph: Graph, config: RunnableConfig, *, timeout: float) -> Any:
        """Wait for the thread's reviews (concurrently), then resume it once; the graph's output."""
        pending = await self.ask(graph, config)
        if not pending:
            raise ValueError(f"thread {_thread(config)} waits on no interrupt")
        reviews = await asyncio.gather(*(self.client.wait(r, timeout=timeout) for _, r in pending))
        return await graph.ainvoke(_resume_value([(i, r) for (i, _), r in zip(pending, reviews, strict=True)]), config)

    async def run(self, graph: Graph, graph_input: Any, config: RunnableConfig, *, timeout: float) -> Any:
        """``ainvoke`` the graph, then ask, wait and resume for as long as it interrupts; its final output."""
        result = await graph.ainvoke(graph_input, config)
        while (await graph.aget_state(config)).interrupts:
            result = await self.resume(graph, config, timeout=timeout)
        return result
