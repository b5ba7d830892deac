"""The embedded default's channel layer: Channels' in-memory layer, expiring old messages and
group memberships at most once a second instead of on every ``receive`` and ``group_send``.

Channels' ``InMemoryChannelLayer._clean_expired`` walks every channel and every group membership;
it ran on each socket's ``receive``, so one message to a queue with a thousand open inbox sockets
cost a million steps (``bench/bench_fanout.py``). Messages expire after 60 s and memberships after a
day: checking once a second changes nothing a reader can tell.
"""

from __future__ import annotations

import time

from channels.layers import InMemoryChannelLayer as ChannelsInMemoryChannelLayer

__all__ = ["InMemoryChannelLayer"]

CLEAN_EVERY = 1.0
"""Seconds between two expiry walks."""


class InMemoryChannelLayer(ChannelsInMemoryChannelLayer):
    """Channels' in-memory layer with its expiry walk at most every :data:`CLEAN_EVERY` seconds."""

    _cleaned_at = float("-inf")

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY:
            return
        self._cleaned_at = now
        super()._clean_expired()
