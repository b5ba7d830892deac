"""``GET /api/v1/reviews/{id}?wait=N`` held on Daphne's event loop, outside Django (``asgi.py``).

Django serves every request in an ``asgiref`` ``ThreadSensitiveContext`` whose thread runs its
sync parts (the ``request_started`` signal, the sync middleware) and lives until the response is
sent: a long-poll held inside Django holds one thread per waiter, all of them blocked. This ASGI
app wraps Django's application (the ASGI middleware pattern) and holds the wait itself:

1. for a ``GET`` of a review it puts an empty dict under :data:`HOLD` in the request's scope and
   lets Django serve it at once: authentication (and its audit entry), the checks of ``wait``, the
   one error shape, the headers; the read view (``review_views.read``), seeing the dict, does not
   wait but, when the review is pending and ``wait`` > 0, fills it in (the client, the review, the
   seconds, the base URL);
2. an answer whose dict stayed empty (an error, a review no longer pending, no ``wait``) is sent
   as Django made it; a filled one is kept back while Django's request ends (its thread with it),
   and the app waits with :func:`~.review_wait.review_settled` (the channel layer; reads through
   Channels' ``database_sync_to_async`` on the thread pool) until the review is not pending or N
   seconds passed, then sends Django's status and headers with the review as last read (the same
   bytes the view makes, :func:`~.review_wait.review_answer`). A client that hangs up meanwhile
   ends the wait (nothing is sent); should a read fail, Django's answer (the review, pending) is
   sent as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from channels.db import database_sync_to_async

from .review_wait import review_settled

__all__ = ["HOLD", "ReviewLongPoll"]

logger = logging.getLogger("reviewconsole.api")

HOLD = "reviewconsole.review_hold"
"""The scope key of the dict the read view fills in when its answer is to be held."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = re.compile(r"/api/v1/reviews/[^/]+")


def _pooled(func: Any) -> Any:
    """``func`` (reads) to await on the thread pool, connections checked before and after."""
    return database_sync_to_async(func, thread_sensitive=False)


async def _settled(hold: dict[str, Any], receive: Receive) -> bytes | None:
    """Wait as :data:`HOLD` says; the review's answer then, None when the client hung up first."""
    waiting = asyncio.ensure_future(
        review_settled(hold["client"], hold["review_id"], hold["seconds"], hold["base_url"], to_async=_pooled)
    )
    listening = asyncio.ensure_future(receive())
    try:
        await asyncio.wait({listening, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done() and not listening.cancelled() and listening.exception() is None:
            waiting.cancel()  # the client hung up: nobody to answer
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            return None
        await asyncio.wait({waiting})
    finally:  # also when the server stops: end the wait with the request
        waiting.cancel()
        listening.cancel()
    return waiting.result()


class ReviewLongPoll:
    """ASGI app: holds review long-polls outside Django (see the module docstring), else ``app``."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET" or not PATH.fullmatch(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        hold: dict[str, Any] = {}
        kept: list[Message] = []

        async def answer(message: Message) -> None:
            if hold:
                kept.append(message)
            else:
                await send(message)

        await self.app({**scope, HOLD: hold}, receive, answer)
        if not kept:
            return
        start, parts = kept[0], kept[1:]
        body = b"".join(part.get("body", b"") for part in parts)
        if start.get("status") == 200:
            try:
                answer = await _settled(hold, receive)
            except Exception:  # e.g. the database away: Django's answer (the review, pending) stands
                logger.warning("Review long-poll of %s answered as first read", hold["review_id"], exc_info=True)
                answer = body
            if answer is None:
                return  # hung up
            body = answer
        headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
        await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
