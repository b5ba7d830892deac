"""A store that dies: every call fails from a chosen write on, as when the worker's process is killed.

:class:`CrashingStore` wraps any :class:`engine.Store`. It numbers the store's write calls
(:data:`WRITES`) from 1; when the count reaches ``crash_at``, that write and every call after it,
reads included, raise :class:`Crashed` without reaching the store. The dead worker's lease is
left as it was, to expire; :class:`Clock` lets an in-memory store's leases expire without waiting.
"""

from __future__ import annotations

from typing import Any

from engine import Store

WRITES = frozenset(
    {"commit", "submit_answers", "open_run", "acquire_lease", "close_run", "release_lease", "restore_checkpoint"}
)
"""The store methods that change what is stored (a lease is stored too)."""


class Crashed(Exception):
    """The worker died (raised by every store call from the crash point on)."""


class Clock:
    """A clock for :class:`engine.InMemoryStore` leases: ``advance`` moves it on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class CrashingStore:
    """``inner`` until write number ``crash_at`` (1-based; None: never), then nothing but :class:`Crashed`.

    ``crash_when`` (a predicate on each write) and :meth:`crash` (called from a node) are other ways
    to choose the point.

    ``writes`` lists the write calls made so far by name (a clean run's list is its write points);
    ``crashed`` tells whether the crash happened.
    """

    def __init__(self, inner: Store, crash_at: int | None = None) -> None:
        self.inner = inner
        self.crash_at = crash_at
        self.writes: list[str] = []
        self.crashed = False
        self.crash_when: Any = lambda name, args: False
        """Or a predicate ``(method name, positional args) -> bool`` naming the write to die at."""

    def crash(self) -> None:
        """Die now: every call from here on fails."""
        self.crashed = True

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.crashed:
                raise Crashed(name)
            if name in WRITES:
                self.writes.append(name)
                if (self.crash_at is not None and len(self.writes) >= self.crash_at) or self.crash_when(name, args):
                    self.crashed = True
                    raise Crashed(name)
            return await method(*args, **kwargs)

        return call
