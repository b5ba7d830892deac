"""The inbox websocket (``/ws/inbox/``): one Channels group per queue, heard only for the user's queues.

On connect the consumer joins the groups, then says ``{"event": "hello", "queues": n,
"versions": {queue_id: version}, "heartbeat": seconds}``: versions read *after* joining, so a
client comparing them with its own knows whether it missed a change between its page load and
this moment (and asks ``/inbox/changes.json`` for it). Group messages follow, each with its
queue's version: a queue's group has one member per process (``hub.py``), which hands each
message to the process's sockets of the queue. ``{"type": "ping"}`` is answered
``{"event": "pong"}``: the client's heartbeat, which tells it within 2.25 intervals (22.5 s by
default) that a socket died without a close frame. A socket whose queue's reader lost the channel
layer is closed with 1013 ("try again later"): the page reconnects.

Access is checked again before each group message and ping (the answer is trusted for
``ACCESS_RECHECK_SECONDS``, 2 s; the checks of many sockets at once run in one batch,
``access.py``), and at once on logout (:func:`close_on_logout` tells the
session's own group, named from a hash of its key): the login must still hold (the session still exists and carries
the user's current session hash, the user is active; Django's own ``auth.get_user``) and the user
must still be in the message's queue. A queue the user left is left (its messages dropped); a
login that ended closes the socket with 4401 ("log in again"), no queue left with 4403 ("no
access"); the page's ``live.js`` stops reconnecting on either.

Each socket sends a group message's text in its reader's locale (saved in their preferences,
read at connect: ``preferences.services.locale_of``), as ``messages.py`` rendered it once per locale.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from ...preferences.services import locale_of
from ..conf import inbox_setting
from ..items.selectors import queues_for
from . import hub
from .access import checked_queues
from .changes import current_versions
from .messages import publish

logger = logging.getLogger("reviewconsole.inbox")

SIGNED_OUT = 4401  # no login (at connect), or the login ended: log in again
NO_ACCESS = 4403  # logged in, but no queue to watch any more
TRY_AGAIN = 1013  # the server cannot forward a queue's messages now: reconnect (RFC 6455 "try again later")


def _read(func: Any) -> Any:
    """``func`` (a read-only query) to await, run in the thread pool, not in the one thread that
    Django's sync views share (``thread_sensitive``): under load that thread is busy with pages,
    and every message a socket waits to forward would wait behind them."""
    return database_sync_to_async(func, thread_sensitive=False)


class InboxConsumer(AsyncJsonWebsocketConsumer):
    """Sends its queues' ``inbox.message`` group messages (handed over by ``hub.py``) to a logged-in
    reviewer of the queue."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=SIGNED_OUT)
            return
        self.user_id = user.pk
        self.session_key = self.scope["session"].session_key
        self.gone = False
        queue_ids, self.locale = await _read(lambda: ([q.pk for q in queues_for(user)], locale_of(user.pk)))()
        self.checked_at = time.monotonic()
        self.queue_ids = queue_ids
        for pk in queue_ids:
            await hub.join(self, pk)
        if self.session_key:
            await self.channel_layer.group_add(session_group(self.session_key), self.channel_name)
        versions = await _read(current_versions)(queue_ids)
        await self.accept()
        await self.send_json(
            {
                "event": "hello",
                "queues": len(queue_ids),
                "versions": {str(k): v for k, v in versions.items()},
                "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
            }
        )

    async def disconnect(self, code: int) -> None:
        for pk in getattr(self, "queue_ids", []):
            await hub.leave(self, pk)
        if getattr(self, "session_key", None):
            await self.channel_layer.group_discard(session_group(self.session_key), self.channel_name)

    async def inbox_signed_out(self, message: dict[str, Any]) -> None:
        """The socket's session logged out (:func:`close_on_logout`)."""
        if not self.gone:
            await self._leave(list(self.queue_ids))
            await self._close(SIGNED_OUT)

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        """A frame that is not JSON is ignored like any other unknown message (the page only pings)."""
        try:
            return await super().decode_json(text_data)
        except ValueError:
            return None

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            if not await self._may_watch(None):
                return
            # The versions let an idle page notice a message it never got (e.g. one published while
            # the channel layer was away): it is behind, so it catches up.
            versions = await _read(current_versions)(self.queue_ids)
            await self.send_json({"event": "pong", "versions": {str(k): v for k, v in versions.items()}})

    def needs_check(self) -> bool:
        """Whether the last access check is older than ``ACCESS_RECHECK_SECONDS``."""
        return not self.gone and time.monotonic() - self.checked_at >= inbox_setting("ACCESS_RECHECK_SECONDS")

    def hears(self, queue_id: int) -> bool:
        """Whether a message of ``queue_id`` is sent to this socket now, by its last access check
        (the queue's reader, ``hub.py``, has the stale ones checked first)."""
        return not self.gone and queue_id in self.queue_ids

    async def _may_watch(self, queue_id: int | None) -> bool:
        """Whether the user may still hear of ``queue_id`` (of any queue: None), checked again
        when the last check is older than ``ACCESS_RECHECK_SECONDS``."""
        if self.needs_check():
            await self.check()
        return not self.gone and (queue_id is None or queue_id in self.queue_ids)

    async def check(self) -> None:
        """Check the access again (batched with the other sockets' checks, ``access.py``). Leaves
        the queues the user lost; closes the socket when the login ended (4401) or no queue is
        left (4403)."""
        allowed = await checked_queues(self.session_key, self.user_id)
        self.checked_at = time.monotonic()
        if self.gone:
            return
        if allowed is None:
            await self._leave(list(self.queue_ids))
            await self._close(SIGNED_OUT)
            return
        lost = [pk for pk in self.queue_ids if pk not in allowed]
        if lost:
            await self._leave(lost)
            if not self.queue_ids:  # (a user who never had a queue keeps an idle socket)
                await self._close(NO_ACCESS)

    async def reconnect(self) -> None:
        """Close with 1013 ("try again later"): a queue's reader lost the channel layer
        (``hub.py``). The page reconnects and reads what it missed (``live.js``)."""
        if not self.gone:
            await self._close(TRY_AGAIN)

    async def _leave(self, queue_ids: list[int]) -> None:
        for pk in queue_ids:
            await hub.leave(self, pk)
        self.queue_ids = [pk for pk in self.queue_ids if pk not in queue_ids]

    async def _close(self, code: int) -> None:
        self.gone = True
        await self.close(code=code)


def session_group(session_key: str) -> str:
    """The Channels group of one login session's sockets (a hash: the key itself is a secret)."""
    return "inbox.session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def close_on_logout(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """``user_logged_out`` receiver: close the inbox sockets of the session logging out now."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if not session_key:
        return
    try:
        publish(session_group(session_key), {"type": "inbox.signed_out"})
    except Exception:  # the logout itself must not fail; the next access check closes them
        logger.exception("Could not tell the inbox sockets of a logout")
