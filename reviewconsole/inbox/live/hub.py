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
re-check of the sockets whose last check is older than ``ACCESS_RECHECK_SECONDS``) and offers the
text of the socket's locale to the socket's own sender (``sender.py``): the reader never waits
for a send, so a client that stops reading holds up nobody else.

Guarantees, as before: a socket hears a queue's messages in the order they were published (one
reader per queue, one message at a time, one sender per socket), after its hello; a message
published after a socket's ``join`` returned reaches it (the group membership is in place before
``join`` returns); a logout closes its session's sockets before any message published after it
(``consumers.close_on_logout`` tells every queue's group); a full channel drops messages (at most
once; a page catches up by the queue versions of its pong).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import TYPE_CHECKING, Any

from .messages import group_name

if TYPE_CHECKING:
    from .consumers import InboxConsumer

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["join", "leave", "members"]


RENEW_EVERY = 5.0
"""Seconds between two renewals of a reader's group membership (one ``group_add``: a Redis
``ZADD`` per queue and process): after a Redis restart the sockets already open hear again
within this, a socket opened after it at once. Channels' own per-socket memberships were lost for
good on a restart (their sockets then closed when their receive failed, if it did)."""


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
        self.reconnecting: asyncio.Task[None] | None = None  # :meth:`renew` found the membership lost

    async def start(self) -> None:
        """Join the group with a channel of its own, then read it until :meth:`stop`."""
        try:
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
        except BaseException:
            self.ready.cancel()  # the sockets waiting for it start a reader anew (:func:`join`)
            raise
        loop = asyncio.get_running_loop()
        self.tasks = [
            loop.create_task(self._read(), name=f"inbox reader {self.group}"),
            loop.create_task(self._refresh(), name=f"inbox reader {self.group}: membership"),
        ]
        self.ready.set_result(None)

    async def stop(self) -> None:
        """Stop reading and leave the group; a layer that fails the discard (Redis away) drops the
        membership after its ``group_expiry``, and the sockets leaving go on leaving."""
        for task in self.tasks:
            task.cancel()
        try:
            await self.layer.group_discard(self.group, self.channel)
        except Exception:
            logger.exception("Could not leave %s", self.group)

    async def renew(self) -> None:
        """Join the group again: a restarted Redis has forgotten every membership, and the layer
        drops one older than its ``group_expiry`` (a day by default in Channels and
        ``channels_redis``), while a reader lives as long as any socket of the process watches
        its queue. A membership found lost means messages may have been missed meanwhile: the
        sockets already here are closed with 4013, so that their pages reconnect and catch up
        by the versions of their hello."""
        lost = await _membership(self.layer, self.group, self.channel) is False
        await self.layer.group_add(self.group, self.channel)
        if lost and self.sockets:
            logger.warning("The membership of %s was lost (the layer restarted?); its sockets reconnect", self.group)
            self.reconnecting = asyncio.get_running_loop().create_task(_reconnect(list(self.sockets)))

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
        """Offer ``message`` to the sockets whose access check is recent, then check the others
        again (one batch, ``access.py``) and offer it to those still allowed; a logout's
        ``inbox.signed_out`` closes its session's sockets first (``consumers.close_on_logout``).
        Never waits for a send (``sender.py``)."""
        if message.get("type") == "inbox.signed_out":
            for socket in [s for s in self.sockets if s.session_hash == message.get("session")]:
                await asyncio.shield(socket.signed_out())
            return
        fresh, stale = [], []
        for socket in self.sockets:
            (stale if socket.needs_check() else fresh).append(socket)
        self._offer(fresh, message)
        if stale:
            # Shielded: a check whose socket leaves this reader's last queue stops the reader
            # (:func:`leave`), which must not cancel the check halfway (its close, its leaving).
            checks = asyncio.gather(*(socket.check() for socket in stale), return_exceptions=True)
            results = await asyncio.shield(checks)
            # A check that failed (the database away) confirms nothing: that socket hears nothing
            # now, and is checked again at the next message or ping.
            self._offer([s for s, r in zip(stale, results, strict=True) if not isinstance(r, BaseException)], message)

    def _offer(self, sockets: list[InboxConsumer], message: dict[str, Any]) -> None:
        for socket in sockets:
            if socket.hears(self.queue_id):  # the JSON made once per locale (messages.py)
                socket.offer(message.get("texts", {}).get(socket.locale) or message["text"])


async def _membership(layer: Any, group: str, channel: str) -> bool | None:
    """Whether ``channel`` is in ``group`` on ``layer``: Channels' in-memory layer (its
    ``groups``) and ``channels_redis`` (the group's sorted set, read as its ``group_add`` writes
    it; pinned by ``tests/scaleout/test_live_hub_redis.py``); None for another layer."""
    groups = getattr(layer, "groups", None)
    if isinstance(groups, dict):
        return channel in groups.get(group, {})
    if all(hasattr(layer, name) for name in ("connection", "consistent_hash", "_group_key")):
        connection = layer.connection(layer.consistent_hash(group))
        return await connection.zscore(layer._group_key(group), channel) is not None
    return None


async def _reconnect(sockets: list[InboxConsumer]) -> None:
    """Close ``sockets`` with 4013 (``InboxConsumer.reconnect``), each close shielded from a
    reader stopping meanwhile."""
    for socket in sockets:
        await asyncio.shield(socket.reconnect())


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
    with contextlib.suppress(Exception):  # the layer is away: its membership expires there
        await reader.layer.group_discard(reader.group, reader.channel)
    await _reconnect(list(reader.sockets))


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
            try:
                await asyncio.shield(reader.ready)
            except asyncio.CancelledError:
                if not reader.ready.cancelled():
                    raise  # this join was cancelled
                continue  # the reader could not start: start one anew
            await reader.renew()
        if readers.get(key) is reader:  # not stopped by its last socket leaving meanwhile
            reader.sockets[socket] = None
            return
        if reader.tasks:  # stopped while it renewed: do not leave it a member for group_expiry
            await reader.layer.group_discard(reader.group, reader.channel)


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
