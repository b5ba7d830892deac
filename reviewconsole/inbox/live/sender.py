"""A socket's outgoing frames, sent in order by a task of the socket's own.

The queue's reader (``hub.py``) only offers a frame to each socket: it never waits for a send. A
client that stops reading makes a send wait (uvicorn's websockets implementation awaits the
transport's drain; Daphne buffers): that socket's own task waits, and no other socket of the
queue waits with it. Frames offered before the socket said hello are held until it did
(:meth:`SocketSender.open`), as Channels' own dispatch held a group message until ``connect``
returned. More than :data:`LIMIT` frames waiting behind a send that waits (not a burst offered
in one loop turn) means the client is not reading: the socket is
closed (its consumer's ``on_overflow``) and its page reconnects and catches up by the versions of
its hello, as after any lost message.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["LIMIT", "SocketSender"]

LIMIT = 100
"""Frames that may wait for one socket (the in-memory layer's channel capacity, as before)."""


class SocketSender:
    """One socket's frames waiting to be sent; ``send`` sends one (the consumer's ``send``),
    ``on_overflow`` is called once when more than :data:`LIMIT` wait behind a send."""

    def __init__(self, send: Callable[[str], Awaitable[None]], on_overflow: Callable[[], Awaitable[None]]) -> None:
        self._send = send
        self._on_overflow = on_overflow
        self._waiting: deque[str] = deque()
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._open = False
        self._sending = False  # a send is waiting for the client (its transport is full)
        self.stopped = False

    def offer(self, text: str) -> None:
        """Send ``text`` after the frames offered before it (never waits; a no-op once stopped)."""
        if self.stopped:
            return
        if len(self._waiting) >= LIMIT and self._sending:  # the client is not taking frames
            self.stop()
            self._closing = asyncio.get_running_loop().create_task(self._on_overflow())
            return
        self._waiting.append(text)
        self._start()

    def open(self) -> None:
        """The socket said hello: send what waits, and from now on what is offered."""
        self._open = True
        self._start()

    def stop(self) -> None:
        """Send nothing more (the socket is closing); what waits is dropped."""
        self.stopped = True
        self._waiting.clear()

    def _start(self) -> None:
        if self._open and self._task is None and self._waiting:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            while self._waiting and not self.stopped:
                self._sending = True
                await self._send(self._waiting.popleft())
                self._sending = False
        except Exception:  # the socket is closing under us: nothing more can reach it
            logger.exception("Could not send to an inbox socket")
            self.stop()
        finally:
            self._task, self._sending = None, False
