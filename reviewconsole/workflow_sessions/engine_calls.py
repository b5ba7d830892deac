"""How sync code calls the engine, and how the ORM store reaches the database.

The engine's API is async, as ADK's ``Runner`` is. The doors' calls (create a session, start
it, submit answers, retry, cancel) wait on nothing but the store: every ``await`` in them ends
in a store method, and a store method is one sync function on the database (a transaction).
:func:`call` runs such a call to its end on the calling thread with no event loop (the
coroutine protocol: ``send(None)`` until ``StopIteration``), and while it does, :func:`in_db`
runs each store function directly on that thread, in the caller's transaction.

Before, ``async_to_sync`` took each of those calls to Daphne's loop, and each store method came
back to the caller's thread through ``sync_to_async``: two thread switches and a wait for the
GIL per store call (an AG-UI start made six), a thread stuck in ``async_to_sync`` when the loop
stopped first (``reviewconsole/in_flight.py``), and the engine's work done on the loop that
serves every request.

A run (``tasks.run_session``: models, tools, timers, parallel branches) waits on more than the
database, so it keeps an event loop (``async_to_sync``), and there :func:`in_db` is
``sync_to_async``, as it is in any coroutine that runs on a loop.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from asgiref.sync import sync_to_async

__all__ = ["call", "in_db"]

_direct: contextvars.ContextVar[bool] = contextvars.ContextVar("engine_calls_direct", default=False)


def call[R](coroutine: Coroutine[Any, Any, R]) -> R:
    """Run ``coroutine`` (an engine or session-service call that only reaches the store) to its
    end on this thread, its store calls made here (:func:`in_db`); returns what it returns and
    raises what it raises.

    Raises:
        RuntimeError: called on a thread running an event loop (a coroutine awaits instead;
            nothing was run), or the call waited on something only an event loop gives (a timer,
            a task, a network read): it is not one of the calls this is for, and it was stopped
            there.
    """
    if _loop_running():
        coroutine.close()
        raise RuntimeError("engine_calls.call() from a thread running an event loop: await the call instead")
    token = _direct.set(True)
    try:
        while True:
            try:
                waited = coroutine.send(None)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if waited is not None:  # ``await asyncio.sleep(0)`` yields None; anything else needs a loop
                coroutine.close()
                raise RuntimeError(f"{coroutine!r} waited on {waited!r}, which needs an event loop; await it instead")
    finally:
        _direct.reset(token)


def in_db[**P, R](fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """``fn`` (sync, on the database) for a coroutine to await: run right here when the coroutine
    is driven by :func:`call` (no loop runs on this thread), else ``sync_to_async(fn)`` (on the
    thread of the sync code that awaits the loop, as Django's thread-sensitive rule asks)."""
    if not _direct.get() or _loop_running():
        return sync_to_async(fn)

    async def now(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(*args, **kwargs)

    return now


def _loop_running() -> bool:
    """Whether this thread runs an event loop (e.g. ``async_to_sync`` started inside :func:`call`,
    which copies the context and with it the direct flag)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
