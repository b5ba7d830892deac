"""The stream's calls of sync code (the database and the session service), one way.

A call runs on a thread (``sync_to_async``) and is counted as work being served
(``reviewconsole.in_flight.counted``): the response object was built long before, so the request
itself is no longer counted, yet a call such as ``services.thread_open`` holds a transaction, and
one that supersedes a thread's session cancels it through ``async_to_sync`` on Daphne's loop.
``serve`` lets counted calls
finish before the loop stops; once it is stopping, a new call is refused as ``unavailable``
before it does anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async

from ..in_flight import ShuttingDown, counted
from .errors import Refusal

__all__ = ["hop"]


def hop[**P, R](fn: Callable[P, R], *, thread_sensitive: bool = True) -> Callable[P, Awaitable[R]]:
    """``sync_to_async(fn)``, counted while it runs.

    Raises (from the returned coroutine function):
        Refusal: ``unavailable`` when ``serve`` is stopping; ``fn`` was not called.
    """
    work = counted(fn)

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return work(*args, **kwargs)
        except ShuttingDown:
            raise Refusal("unavailable") from None

    return sync_to_async(call, thread_sensitive=thread_sensitive)
