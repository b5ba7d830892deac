"""``GET /api/v1/reviews/{id}?wait=N`` held on Daphne's event loop, in front of Django (``asgi.py``).

Django serves every request in an ``asgiref`` ``ThreadSensitiveContext`` whose thread runs its
sync parts (the ``request_started`` signal, the sync middleware) and lives until the response is
sent: a long-poll served by Django alone holds one thread per waiter, all of them blocked. This
ASGI app (the ASGI "middleware" pattern: it wraps Django's application) holds the wait itself:

1. a ``GET`` of a review with one ``wait`` in (0, :data:`~.review_wait.MAX_WAIT`] and no body
   (anything else goes to Django at once, which answers or refuses it as usual);
2. it finds the token's client (``auth.client_for_authorization``, read only) and waits with
   :func:`~.review_wait.review_settled` (the channel layer, reads through Channels'
   ``database_sync_to_async`` on its one shared thread) until the review is not pending or N
   seconds passed; a client that hangs up meanwhile ends it (nothing is sent);
3. then it hands the request to Django with ``wait`` taken out of the query string, so the answer
   (authentication and its audit entry, the review JSON, the one error shape, security headers) is
   Django's own read. An unknown token or review is not waited on: Django answers 401 / 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from channels.db import database_sync_to_async

from .auth import client_for_authorization
from .errors import ApiError
from .review_wait import MAX_WAIT, review_settled

__all__ = ["ReviewLongPoll"]

logger = logging.getLogger("reviewconsole.api")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = re.compile(r"/api/v1/reviews/(?P<review_id>[^/]+)")


def _held(scope: Scope) -> tuple[str, float, bytes] | None:
    """``(review_id, seconds, query string without wait)`` for a long-poll to hold, else None."""
    if scope.get("type") != "http" or scope.get("method") != "GET":
        return None
    found = PATH.fullmatch(scope.get("path", ""))
    if found is None:
        return None
    try:
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        [raw] = [value for name, value in pairs if name == "wait"]
        seconds = float(raw)
    except ValueError:  # no wait, several, or not a number: Django answers (or refuses) it
        return None
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_WAIT):
        return None
    rest = urlencode([(name, value) for name, value in pairs if name != "wait"]).encode("latin-1")
    return found["review_id"], seconds, rest


def _authorization(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            return str(value.decode("latin-1"))
    return ""


def _wait_for(header: str, review_id: str, seconds: float) -> Callable[[], Awaitable[object]]:
    async def wait() -> object:
        client = await database_sync_to_async(client_for_authorization)(header)
        if client is None:
            return None  # Django answers 401
        try:
            return await review_settled(client, review_id, seconds, to_async=database_sync_to_async)
        except ApiError:
            return None  # Django answers 404

    return wait


class _Replay:
    """The ``receive`` Django gets: the request's messages already read, then the one the hold
    was listening for (a hang-up), then the server's."""

    def __init__(self, read: list[Message], receive: Receive) -> None:
        self.read = read
        self.listening: asyncio.Future[Message] | None = None
        self.receive = receive

    async def __call__(self) -> Message:
        if self.read:
            return self.read.pop(0)
        if self.listening is not None:
            listening, self.listening = self.listening, None
            return await listening
        return await self.receive()


async def _request(receive: Receive) -> tuple[list[Message], bool]:
    """The request's messages up to its last body part, and whether it came whole with no body."""
    read: list[Message] = []
    while True:
        message = await receive()
        read.append(message)
        if message.get("type") != "http.request" or message.get("body"):
            return read, False  # a hang-up, or a body: Django's to handle
        if not message.get("more_body"):
            return read, True


class ReviewLongPoll:
    """ASGI app: holds review long-polls (see the module docstring), else hands over to ``app``."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        held = _held(scope)
        if held is None:
            await self.app(scope, receive, send)
            return
        review_id, seconds, rest = held
        read, empty = await _request(receive)
        replay = _Replay(read, receive)
        if not empty:
            await self.app(scope, replay, send)
            return
        listening = asyncio.ensure_future(receive())
        waiting = asyncio.ensure_future(_wait_for(_authorization(scope), review_id, seconds)())
        try:
            await asyncio.wait({listening, waiting}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server stops: end the wait with it
            waiting.cancel()
            listening.cancel()
            raise
        if not waiting.done():  # the client hung up: nobody to answer
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            return
        if waiting.exception() is not None:  # e.g. the database away: Django's read answers it
            logger.warning("Review long-poll of %s ended early", review_id, exc_info=waiting.exception())
        replay.listening = listening
        await self.app({**scope, "query_string": rest}, replay, send)
