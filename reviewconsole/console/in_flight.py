"""Requests being served right now, so that ``serve`` stops only once they have finished.

Django serves a sync view on a thread of its own; a view that calls the engine
(``async_to_sync``, e.g. ``session_start``) runs that coroutine on Daphne's event loop. When
SIGTERM stops the reactor, Daphne cancels the request's ASGI task but not its thread: with the
loop stopped, the thread waited for ever inside ``async_to_sync`` holding its transaction (SQLite:
the write lock, so the task workers failed with "database is locked"), and the process never
exited, or a late call found its executor gone ("CurrentThreadExecutor already quit"). ``serve``
waits, before the reactor shuts down and while the loop still runs, until every request thread
has left the middleware chain (:func:`wait_idle`), at most ``GRACE_SECONDS``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

__all__ = ["GRACE_SECONDS", "InFlightMiddleware", "in_flight", "wait_idle"]

GRACE_SECONDS = 10.0
"""Longest ``serve`` waits on shutdown for requests being served."""

_idle = threading.Condition()
_count = 0


def in_flight() -> int:
    """How many requests are inside the middleware chain now."""
    with _idle:
        return _count


def wait_idle(timeout: float = GRACE_SECONDS) -> bool:
    """Block until no request is being served (True) or ``timeout`` seconds passed (False)."""
    deadline = time.monotonic() + timeout
    with _idle:
        while _count:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _idle.wait(left)
        return True


class InFlightMiddleware:
    """Counts a request from the moment the chain is entered until its response is built (the
    first middleware: a sync one, so it runs on the request's own thread)."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        global _count
        with _idle:
            _count += 1
        try:
            return self.get_response(request)
        finally:
            with _idle:
                _count -= 1
                _idle.notify_all()
