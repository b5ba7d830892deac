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
    task = asyncio.ensure_future(work)
    lost: list[str] = []
    keeper: list[asyncio.Future[None]] = []

    def start_keeper() -> None:
        # Most runs end well before their first renewal is due: they never pay for a keeper task.
        if not task.done():
            keeper.append(asyncio.ensure_future(_renew(store, session_id, owner, ttl, task, lost)))

    first_renewal = asyncio.get_running_loop().call_later(ttl / 3, start_keeper)
    try:
        return await task
    except asyncio.CancelledError:
        if lost:
            raise ConcurrencyError(
                f"Session {session_id}: the run stopped because its lease could not be renewed ({lost[0]}).",
                session_id=session_id,
                reason="lease_lost",
            ) from None
        raise
    finally:
        first_renewal.cancel()
        for renewing in keeper:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing


async def _renew(
    store: Store, session_id: str, owner: str, ttl: float, task: asyncio.Future[Any], lost: list[str]
) -> None:
    # Started ``interval`` after the lease was taken (or last renewed by a commit, at the latest):
    # renew now, then every ``interval``.
    interval = ttl / 3
    renewed = time.monotonic() - interval
    first = True
    while True:
        if not first:
            # Wakes when the run ends, else after ``interval`` (no asyncio.sleep, which tests patch).
            await asyncio.wait({task}, timeout=interval)
        first = False
        if task.done():
            return
        try:
            ok = await store.acquire_lease(session_id, owner, ttl)
        except Exception as exc:  # the store may be down for a moment: try again until the lease runs out
            logger.warning("Session %s: renewing the lease failed: %r", session_id, exc)
            if time.monotonic() - renewed < ttl - interval:
                continue
            lost.append(f"the store failed: {exc!r}")
        else:
            if ok:
                renewed = time.monotonic()
                continue
            lost.append("another run holds it")
        logger.error("Session %s: the run lost its lease (%s); stopping it", session_id, lost[0])
        task.cancel()
        return
