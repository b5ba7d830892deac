"""The inbox sockets' access re-checks, batched: one thread-pool job checks every socket that
asked in the same moment, not one job each.

A new item reaches every reviewer's socket at once, and each socket whose last check is older
than ``ACCESS_RECHECK_SECONDS`` checks again before forwarding it (``consumers._may_watch``): at a
thousand sockets, a thousand thread-pool hops, each opening and closing a database connection,
queued behind six pool threads, took over a minute on the embedded default
(``bench/bench_fanout.py``). Here the checks asked while a job is pending or running wait for the
next job, which runs them one after another on one connection: the same check
(:func:`queues_now`, Django's own ``auth.get_user``), fewer hops.
"""

from __future__ import annotations

import asyncio
import weakref
from importlib import import_module
from types import SimpleNamespace

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib import auth

from ..items.selectors import queues_for

__all__ = ["checked_queues", "queues_now"]

Login = tuple[str, int]
"""``(session key, user id)`` of a socket."""


def queues_now(session_key: str, user_id: int) -> set[int] | None:
    """The ids of the queues the socket's user is in now, or None when its login ended (logged
    out, session expired or flushed, password changed, user deactivated)."""
    if not session_key:
        return None
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    user = auth.get_user(SimpleNamespace(session=session))  # Django's checks, as for a page
    if not user.is_authenticated or user.pk != user_id:
        return None
    return set(queues_for(user).values_list("pk", flat=True))


def _check_all(logins: list[Login]) -> dict[Login, set[int] | None]:
    return {login: queues_now(*login) for login in logins}


class _Batch:
    """The checks waiting on one event loop for the next job."""

    def __init__(self) -> None:
        self.waiting: dict[Login, list[asyncio.Future[set[int] | None]]] = {}
        self.job: asyncio.Task[None] | None = None

    async def run(self) -> None:
        while self.waiting:
            batch, self.waiting = self.waiting, {}
            try:
                # A thread-pool thread, not the one Django's sync views share (see consumers._read).
                found = await database_sync_to_async(_check_all, thread_sensitive=False)(list(batch))
            except Exception as exc:  # every socket of the job fails as its own check would have
                for futures in batch.values():
                    for future in futures:
                        if not future.done():
                            future.set_exception(exc)
                continue
            for login, futures in batch.items():
                for future in futures:
                    if not future.done():
                        future.set_result(found[login])
        self.job = None


_batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batch] = weakref.WeakKeyDictionary()


async def checked_queues(session_key: str, user_id: int) -> set[int] | None:
    """:func:`queues_now` for one socket, run in the next batch of this event loop."""
    loop = asyncio.get_running_loop()
    batch = _batches.setdefault(loop, _Batch())
    future: asyncio.Future[set[int] | None] = loop.create_future()
    batch.waiting.setdefault((session_key, user_id), []).append(future)
    if batch.job is None:
        batch.job = loop.create_task(batch.run())
    return await future
