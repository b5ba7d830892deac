"""A stream's events made by a task of their own until what its client sent is stored.

Django cancels or closes a streaming response's generator when the client leaves. An AG-UI run
stores what the client sent (its first message, its answers) only after RUN_STARTED went out, so
a client leaving right then would stop that too. :class:`Detached` runs the events in a task
until ``stored`` is set: a client that leaves before stops nothing, and the task goes on until
``stored`` (then the events are closed, leaving the progress subscription). From there on the
stream pulls the events itself, as its client takes them, so nothing is noted as sent (the
thread's ``last_seq``) before the client was sent what comes before it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ag_ui.core import BaseEvent

__all__ = ["Detached"]

HANDED_OVER = "handed over"
"""What the task returns when it stopped at ``stored`` with events left to pull."""

_tasks: set[asyncio.Task[Any]] = set()  # the tasks, and their closes, outlive a client that left


class Detached:
    """``async for event in Detached(events, stored)``: ``events`` as they come, the exception that
    ended them raised as theirs; :meth:`release` when the stream ends or its client leaves. The
    task starts at once, so a stream closed before it iterates (right after RUN_STARTED) still
    stores what its client sent."""

    def __init__(self, events: AsyncGenerator[BaseEvent, None], stored: asyncio.Event) -> None:
        self._events = events
        self._out: asyncio.Queue[BaseEvent | Exception | None] = asyncio.Queue()
        self._producer = _keep(asyncio.get_running_loop().create_task(self._produce(stored)))
        self._pulling = False

    async def __aiter__(self) -> AsyncIterator[BaseEvent]:
        while (item := await self._out.get()) is not None:
            if isinstance(item, Exception):
                raise item
            yield item
        if await self._producer == HANDED_OVER:
            self._pulling = True
            async for event in self._events:
                yield event

    def release(self) -> None:
        """The stream ended or its client left: unless the stream pulls the events itself, close
        them once the task is done, if it stopped at ``stored``."""
        if self._pulling:
            return

        async def close() -> None:
            if await self._producer == HANDED_OVER:
                await self._events.aclose()

        _keep(asyncio.get_running_loop().create_task(close()))

    async def _produce(self, stored: asyncio.Event) -> str:
        """Put the events on the queue until the first one after ``stored`` is set (then
        :data:`HANDED_OVER`), or until they end, or what ended them; then None."""
        try:
            async for event in self._events:
                self._out.put_nowait(event)
                if stored.is_set():
                    return HANDED_OVER
        except Exception as exc:
            self._out.put_nowait(exc)
        finally:
            self._out.put_nowait(None)
        return "ended"


def _keep(task: asyncio.Task[Any]) -> asyncio.Task[Any]:
    """``task``, kept referenced until it is done."""
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task
