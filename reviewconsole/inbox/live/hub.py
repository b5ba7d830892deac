"""One reader per queue and process for the inbox sockets: a queue's group has one member per
process, not one per socket, and that member hands each message to the process's sockets of the
queue in one pass.

With a channel per socket, one new item in a queue watched by a thousand sockets was a thousand
copies on a thousand channels, each woken through Channels' dispatch (a ``receive`` task, the
completion callback of ``await_many_dispatch``, the handler's task): three loop turns of a thousand
callbacks before the first socket sent anything (``bench/bench_fanout.py``, 80–90 ms at a thousand
sockets; on ``channels_redis`` a thousand Redis messages). Here the queue's group holds one
channel of this process and event loop; its reader receives each message once and, for every
socket of the queue, checks access as the socket did (``InboxConsumer.hears``: the batched
re-check of the sockets whose last check is older than ``ACCESS_RECHECK_SECONDS``) and sends the
text of the socket's locale.

Guarantees, as before: a socket hears a queue's messages in the order they were published (one
reader per queue, one message at a time); a message published after a socket's ``join`` returned
reaches it (the group membership is in place before ``join`` returns); a full channel drops
messages (at most once; a page catches up by the queue versions of its pong).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING, Any

from .messages import group_name

if TYPE_CHECKING:
    from .consumers import InboxConsumer

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["join", "leave", "members"]


RENEW_EVERY = 30.0
"""Seconds between two renewals of a reader's group membership: after a Redis restart the
sockets already open hear again within this (their pages catch up by the versions of their
pongs meanwhile), a socket opened after it at once."""


class _Reader:
    """The member of one queue's group for one layer and event loop, and the sockets it serves."""

    def __init__(self, layer: Any, queue_id: int) -> None:
        self.layer = layer
        self.queue_id = queue_id
        self.group = group_name(queue_id)
        self.sockets: dict[InboxConsumer, None] = {}  # insertion-ordered set
        self.channel = ""
        self.ready = asyncio.get_running_loop().create_future()
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Join the group with a channel of its own, then read it until :meth:`stop`."""
        try:
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
        except BaseException as exc:
            self.ready.set_exception(exc)
            raise
        loop = asyncio.get_running_loop()
        self.tasks = [
            loop.create_task(self._read(), name=f"inbox reader {self.group}"),
            loop.create_task(self._refresh(), name=f"inbox reader {self.group}: membership"),
        ]
        self.ready.set_result(None)

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await self.layer.group_discard(self.group, self.channel)

    async def renew(self) -> None:
        """Join the group again: a restarted Redis has forgotten every membership, and the layer
        drops one older than its ``group_expiry`` (a day by default in Channels and
        ``channels_redis``), while a reader lives as long as any socket of the process watches
        its queue."""
        await self.layer.group_add(self.group, self.channel)

    async def _refresh(self) -> None:
        """:meth:`renew` every :data:`RENEW_EVERY` seconds (or a quarter of ``group_expiry``, if
        shorter), and on every socket's join (:func:`join`)."""
        every = min(RENEW_EVERY, getattr(self.layer, "group_expiry", 86400) / 4)
        while True:
            await asyncio.sleep(every)
            try:
                await self.renew()
            except Exception:  # the next one tries again; the reader still reads
                logger.exception("Could not renew the membership of %s", self.group)

    async def _read(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except Exception:
                logger.exception("The reader of %s lost the channel layer; its sockets reconnect", self.group)
                await _drop(self)
                return
            try:
                await self._deliver(message)
            except Exception:  # one bad message must not end the queue's reader
                logger.exception("Could not hand a message of %s to its sockets", self.group)

    async def _deliver(self, message: dict[str, Any]) -> None:
        """Send ``message`` to the sockets whose access check is recent, then check the others
        again (one batch, ``access.py``) and send it to those still allowed."""
        fresh, stale = [], []
        for socket in self.sockets:
            (stale if socket.needs_check() else fresh).append(socket)
        await self._send(fresh, message)
        if stale:
            await asyncio.gather(*(socket.check() for socket in stale), return_exceptions=True)
            await self._send(stale, message)

    async def _send(self, sockets: list[InboxConsumer], message: dict[str, Any]) -> None:
        for socket in sockets:
            if not socket.hears(self.queue_id):
                continue
            try:  # the JSON made once per locale (messages.py)
                await socket.send(text_data=message.get("texts", {}).get(socket.locale) or message["text"])
            except Exception:  # a socket closing under us: the others still hear
                logger.exception("Could not send a message of %s to a socket", self.group)


_readers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, int], _Reader]] = (
    weakref.WeakKeyDictionary()
)


def _of_loop() -> dict[tuple[int, int], _Reader]:
    return _readers.setdefault(asyncio.get_running_loop(), {})


async def _drop(reader: _Reader) -> None:
    """A reader that cannot read: forgotten (a socket joining from now on starts a new one), and
    its sockets closed so that their pages reconnect and catch up (``InboxConsumer.reconnect``)."""
    readers = _of_loop()
    key = (id(reader.layer), reader.queue_id)
    if readers.get(key) is reader:
        del readers[key]
    for task in reader.tasks:
        if task is not asyncio.current_task():
            task.cancel()
    for socket in list(reader.sockets):
        await socket.reconnect()


async def join(socket: InboxConsumer, queue_id: int) -> None:
    """Have ``socket`` hear ``queue_id``'s messages from the moment this returns: the process's
    reader of the queue is started and in the group first, when it is the queue's first socket,
    else its membership renewed (:meth:`_Reader.renew`)."""
    readers = _of_loop()
    key = (id(socket.channel_layer), queue_id)
    while True:
        reader = readers.get(key)
        if reader is None:
            reader = readers[key] = _Reader(socket.channel_layer, queue_id)
            try:
                await reader.start()
            except BaseException:
                if readers.get(key) is reader:
                    del readers[key]
                raise
        else:
            await asyncio.shield(reader.ready)
            await reader.renew()
        if readers.get(key) is reader:  # not stopped by its last socket leaving meanwhile
            reader.sockets[socket] = None
            return


async def leave(socket: InboxConsumer, queue_id: int) -> None:
    """``socket`` no longer hears ``queue_id``; the queue's reader leaves the group with its last socket."""
    readers = _of_loop()
    key = (id(socket.channel_layer), queue_id)
    reader = readers.get(key)
    if reader is None or socket not in reader.sockets:
        return
    del reader.sockets[socket]
    if not reader.sockets:
        del readers[key]  # a socket joining from now on starts a reader of its own
        await reader.ready
        await reader.stop()


def members(queue_id: int) -> int:
    """How many sockets of this event loop hear ``queue_id`` (for tests and the bench)."""
    return sum(len(r.sockets) for (_, pk), r in _of_loop().items() if pk == queue_id)
