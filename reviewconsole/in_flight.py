"""Work being served right now, so that ``serve`` stops only once it has finished.

Django serves a sync view on a thread of its own; a view that calls a coroutine through
``async_to_sync`` (e.g. ``session_cancel``; a start and answers run on the view's own thread,
``workflow_sessions.engine_calls``) runs it on Daphne's event loop. When
SIGTERM stops the reactor, Daphne cancels the request's ASGI task but not its thread: with the
loop stopped, the thread waited for ever inside ``async_to_sync`` holding its transaction (SQLite:
the write lock, so the task workers failed with "database is locked"), and the process never
exited, or a late call found its executor gone ("CurrentThreadExecutor already quit"). ``serve``
waits, before the reactor shuts down and while the loop still runs, until nothing counted here is
left (:func:`drain`), at most ``GRACE_SECONDS``.

Two things are counted:

- a request, from the moment the middleware chain is entered until its response is built
  (:class:`InFlightMiddleware`);
- a call a streaming response makes on a thread after that (:func:`counted`: the AG-UI stream's
  database work, which starts sessions and stores answers long after its response object was
  built). Once ``serve`` has begun to stop, such a call is refused with
  :class:`ShuttingDown` before it does anything, so none starts that the stopped loop could strand.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .unavailable import refusal

__all__ = ["GRACE_SECONDS", "InFlightMiddleware", "ShuttingDown", "counted", "drain", "in_flight", "wait_idle"]

GRACE_SECONDS = 10.0
"""Longest ``serve`` waits on shutdown for the work being served."""

_idle = threading.Condition()
_count = 0
_stopping = False


class ShuttingDown(Exception):
    """``serve`` is stopping: work :func:`counted` is not started any more."""


def in_flight() -> int:
    """How many requests (and counted calls) are being served now."""
    with _idle:
        return _count


def wait_idle(timeout: float = GRACE_SECONDS) -> bool:
    """Block until nothing is being served (True) or ``timeout`` seconds passed (False)."""
    deadline = time.monotonic() + timeout
    with _idle:
        while _count:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _idle.wait(left)
        return True


def drain(timeout: float = GRACE_SECONDS) -> bool:
    """``serve`` is stopping: refuse new :func:`counted` calls, then :func:`wait_idle`."""
    global _stopping
    with _idle:
        _stopping = True
    return wait_idle(timeout)


def _enter() -> Callable[[], None]:
    """Count one piece of work being served; returns the function that ends it.

    Raises:
        ShuttingDown: ``serve`` has begun to stop; nothing was counted.
    """
    global _count
    with _idle:
        if _stopping:
            raise ShuttingDown
        _count += 1

    def leave() -> None:
        global _count
        with _idle:
            _count -= 1
            _idle.notify_all()

    return leave


def counted[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """``fn``, counted as work being served while it runs (for a thread a streaming response
    hands work to: ``sync_to_async(counted(fn))``).

    Raises:
        ShuttingDown: ``serve`` has begun to stop; ``fn`` was not called.
    """

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        leave = _enter()
        try:
            return fn(*args, **kwargs)
        finally:
            leave()

    return call


class InFlightMiddleware:
    """Counts a request from the moment the chain is entered until its response is built (the
    first middleware: a sync one, so it runs on the request's own thread); once ``serve`` is
    stopping, a new request is answered 503 ``stopping`` with ``Retry-After`` before anything
    of it runs."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            leave = _enter()
        except ShuttingDown:  # serve is stopping: nothing of this request runs (its body is not read)
            return refusal(request, "stopping")
        try:
            return self.get_response(request)
        finally:
            leave()
