"""Keeping a run's lease alive while its nodes work (internal).

A run holds its session's lease for ``ttl`` seconds; every commit extends it. A node that works
longer than ``ttl`` without committing (a slow model call) would lose it, and another worker
would run the same node again. :func:`keep_lease` renews the lease every ``ttl / 3`` seconds
while the run is alive. When a renewal is refused (another owner holds the lease: ours expired
and was taken) or renewals keep failing until the lease is about to expire (the store is
unreachable), it cancels the run and raises :class:`~engine.ConcurrencyError`; whatever the run
committed stays, and the next ``run_pending`` resumes from that checkpoint.

Renewal needs the event loop: a node that blocks it (synchronous work longer than ``ttl``)
cannot be kept alive and should be ``async`` or raise its ``ttl``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from typing import Any

from ._errors import ConcurrencyError
from ._store import Store

__all__ = ["keep_lease"]

logger = logging.getLogger("engine")


async def keep_lease[T](store: Store, session_id: str, owner: str, ttl: float, work: Awaitable[T]) -> T:
    """Await ``work`` while renewing ``owner``'s lease on ``session_id`` every ``ttl / 3`` seconds.

    ``work`` runs in the calling task (no task of its own: a run that ends before its first
    renewal is due, as most do, costs one timer). A lost lease cancels the calling task, as
    :func:`asyncio.timeout` does, and the cancellation becomes :class:`~engine.ConcurrencyError`
    here; a cancellation from anyone else passes through unchanged.

    Args:
        store: where the lease lives (``acquire_lease`` by the same owner renews it).
        session_id: the session whose lease the run holds.
        owner: the lease owner the run acquired it as.
        ttl: the lease's length in seconds; renewals extend it to ``ttl`` from now.
        work: the run (a coroutine); it is cancelled when the lease is lost.

    Returns:
        What ``work`` returned.

    Raises:
        ConcurrencyError: the lease could not be renewed (``details["reason"] == "lease_lost"``);
            the run was cancelled.
    """
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("keep_lease must run inside an asyncio task.")
    keeper = _Keeper(store, session_id, owner, ttl, task)
    cancelling = task.cancelling()
    loop = asyncio.get_running_loop()
    first_renewal = loop.call_at(loop.time() + ttl / 3, keeper.start)
    try:
        result = await work
    except asyncio.CancelledError:
        if keeper.lost and task.uncancel() <= cancelling:
            raise ConcurrencyError(
                f"Session {session_id}: the run stopped because its lease could not be renewed ({keeper.lost[0]}).",
                session_id=session_id,
                reason="lease_lost",
            ) from None
        raise
    finally:
        first_renewal.cancel()
        if keeper.renewing is not None:
            await keeper.stop()
    if keeper.lost:  # the run ended on its own although its task was cancelled: nothing to stop
        task.uncancel()
    return result


class _Keeper:
    """Renews a run's lease from a task of its own, started once the first renewal is due."""

    __slots__ = ("lost", "owner", "renewing", "session_id", "store", "task", "ttl")

    def __init__(self, store: Store, session_id: str, owner: str, ttl: float, task: asyncio.Task[Any]) -> None:
        self.store = store
        self.session_id = session_id
        self.owner = owner
        self.ttl = ttl
        self.task = task
        """The run's task: cancelled when the lease is lost."""
        self.lost: list[str] = []
        """Why the lease was lost (one entry), or empty."""
        self.renewing: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.renewing = asyncio.ensure_future(self._renew())

    async def stop(self) -> None:
        renewing, self.renewing = self.renewing, None
        if renewing is not None:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing

    async def _renew(self) -> None:
        # Started ``interval`` after the lease was taken (or last renewed by a commit, at the
        # latest): renew now, then every ``interval``.
        ttl, session_id = self.ttl, self.session_id
        interval = ttl / 3
        renewed = time.monotonic() - interval
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()  # never set: a timer
        first = True
        while True:
            if not first:
                # Waits ``interval`` (no asyncio.sleep, which tests patch); stop() cancels it.
                await asyncio.wait({wake}, timeout=interval)
            first = False
            try:
                ok = await self.store.acquire_lease(session_id, self.owner, ttl)
            except Exception as exc:  # the store may be down for a moment: try again until the lease runs out
                logger.warning("Session %s: renewing the lease failed: %r", session_id, exc)
                if time.monotonic() - renewed < ttl - interval:
                    continue
                self.lost.append(f"the store failed: {exc!r}")
            else:
                if ok:
                    renewed = time.monotonic()
                    continue
                self.lost.append("another run holds it")
            logger.error("Session %s: the run lost its lease (%s); stopping it", session_id, self.lost[0])
            self.task.cancel()
            return
