"""The embedded default's channel layer: Channels' in-memory layer, expiring old messages and
group memberships at most once a second instead of on every ``receive`` and ``group_send``, and
sending a group message to its members in one pass instead of one task each.

Channels' ``InMemoryChannelLayer._clean_expired`` walks every channel and every group membership;
it ran on each socket's ``receive``, so one message to a queue with a thousand open inbox sockets
cost a million steps (``bench/bench_fanout.py``). Messages expire after 60 s and memberships after a
day: checking once a second changes nothing a reader can tell. Channels' ``group_send`` made a task
per member and awaited them all: at a thousand sockets 25–30 ms of the loop before any socket
heard of the message, and every reader woken a loop turn later; putting it on each member's queue
in turn (``send``: a copy each, a full queue skipped as before) is the same for the readers.
"""

from __future__ import annotations

import time
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer as ChannelsInMemoryChannelLayer

__all__ = ["InMemoryChannelLayer"]

CLEAN_EVERY = 1.0
"""Seconds between two expiry walks."""


class InMemoryChannelLayer(ChannelsInMemoryChannelLayer):
    """Channels' in-memory layer with its expiry walk at most every :data:`CLEAN_EVERY` seconds
    and its group messages put on the members' queues in one pass."""

    _cleaned_at = float("-inf")

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY:
            return
        self._cleaned_at = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        """Put ``message`` on the queue of each channel in ``group`` (a copy each), in one pass; a
        channel whose queue is full misses it, as with Channels' own (at most once)."""
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, {})):
            try:
                await self.send(channel, message)
            except ChannelFull:
                continue
