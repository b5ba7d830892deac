"""The inbox websocket (``/ws/inbox/``): one Channels group per queue, heard only for the user's queues.

On connect the consumer joins the groups, then says ``{"event": "hello", "queues": n,
"versions": {queue_id: version}, "heartbeat": seconds}``: versions read *after* joining, so a
client comparing them with its own knows whether it missed a change between its page load and
this moment (and asks ``/inbox/changes.json`` for it). Group messages follow, each with its
queue's version: a queue's group has one member per process (``hub.py``), which offers each
message to the process's sockets of the queue; each socket sends its frames in order from a
task of its own (``sender.py``). ``{"type": "ping"}`` is answered ``{"event": "pong"}`` after
the messages offered to the socket before it: the client's heartbeat, which tells it within 2.25
intervals (22.5 s by default) that a socket died without a close frame. A socket whose queue's reader lost the channel
layer, or whose client is over 100 frames behind, is closed with 4013 ("try again later"): the
page reconnects and catches up.

Access is checked again before each group message and ping (the answer is trusted for
``ACCESS_RECHECK_SECONDS``, 2 s; the checks of many sockets at once run in one batch,
``access.py``), and at once on logout (:func:`close_on_logout` tells every queue's group and the
session's own, named from a hash of its key): the login must still hold (the session still exists and carries
the user's current session hash, the user is active; Django's own ``auth.get_user``) and the user
must still be in the message's queue. A queue the user left is left (its messages dropped); a
login that ended closes the socket with 4401 ("log in again"), no queue left with 4403 ("no
access"); the page's ``live.js`` stops reconnecting on either.

Each socket sends a group message's text in its reader's locale (saved in their preferences,
read at connect: ``preferences.services.locale_of``), as ``messages.py`` rendered it once per locale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from ...preferences.services import locale_of
from ..conf import inbox_setting
from ..items.selectors import queues_for
from ..models import Queue
from . import hub
from .access import checked_queues
from .changes import current_versions
from .messages import group_name, publish
from .sender import SocketSender

logger = logging.getLogger("reviewconsole.inbox")

SIGNED_OUT = 4401  # no login (at connect), or the login ended: log in again
NO_ACCESS = 4403  # logged in, but no queue to watch any more
# The server cannot forward a queue's messages now: reconnect and catch up. RFC 6455's 1013 ("try
# again later") in the private range: Daphne (autobahn) lets a server close only with 1000 or
# 3000-4999, and refused 1013 (the socket then stayed open, hearing nothing).
TRY_AGAIN = 4013
HANDLER_FAILED = 1011  # the connect or a ping failed halfway (RFC 6455 "internal error")


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
        self.session_hash = session_hash(self.session_key) if self.session_key else ""
        self.gone = False
        self.sender = SocketSender(lambda text: self.send(text_data=text), lambda: self._gone(TRY_AGAIN))
        self.queue_ids: list[int] = []
        await self._watch(user)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch; a handler that raised (a connect failing halfway, a ping whose
        versions could not be read) leaves every queue and group first: Channels calls no
        ``disconnect()`` for a consumer that raised, and the socket stayed in its readers."""
        try:
            await super().dispatch(message)
        except StopConsumer:
            raise
        except BaseException:
            await self.disconnect(HANDLER_FAILED)
            raise

    async def _watch(self, user: Any) -> None:
        """Join the user's queues and the session's group, then say hello with the versions read
        after joining; group messages wait for the hello (``sender.py``)."""
        asked = time.monotonic()  # the answer is as old as the moment it was asked for
        queue_ids, self.locale = await _read(lambda: ([q.pk for q in queues_for(user)], locale_of(user.pk)))()
        self.checked_at = asked
        for pk in queue_ids:
            await hub.join(self, pk)
            self.queue_ids.append(pk)
            if self.gone:  # logged out meanwhile (closed 4401 by a queue's reader)
                await self._leave(list(self.queue_ids))
                return
        if self.session_key:
            await self.channel_layer.group_add(session_group(self.session_key), self.channel_name)
        versions = await _read(current_versions)(queue_ids)
        if self.gone:  # logged out meanwhile: closed 4401 already, nothing more to send
            return
        await self.accept()
        await self.send_json(
            {
                "event": "hello",
                "queues": len(queue_ids),
                "versions": {str(k): v for k, v in versions.items()},
                "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
            }
        )
        self.sender.open()

    async def disconnect(self, code: int) -> None:
        for pk in getattr(self, "queue_ids", []):
            await hub.leave(self, pk)
        if getattr(self, "session_key", None):
            await self.channel_layer.group_discard(session_group(self.session_key), self.channel_name)

    async def inbox_signed_out(self, message: dict[str, Any]) -> None:
        """The socket's session logged out (:func:`close_on_logout`; a socket watching no queue
        hears it here, the others from their queues' readers first)."""
        await self.signed_out()

    async def signed_out(self) -> None:
        """Leave every queue and close with 4401: the session logged out."""
        await self._gone(SIGNED_OUT)

    def offer(self, text: str) -> None:
        """Send ``text`` (a group message's JSON) after what was offered before (``sender.py``)."""
        self.sender.offer(text)

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
            # After the group messages offered to this socket before it. A message not offered
            # yet (on its way from a commit, or held while a queue's reader checks other sockets)
            # may come after a pong that already counts it: the page then catches up once
            # (/inbox/changes.json) and drops the late message as seen.
            self.offer(json.dumps({"event": "pong", "versions": {str(k): v for k, v in versions.items()}}))

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
        asked = time.monotonic()  # the answer is as old as the moment it was asked for
        allowed = await checked_queues(self.session_key, self.user_id)
        self.checked_at = asked
        if self.gone:
            return
        if allowed is None:
            await self._gone(SIGNED_OUT)
            return
        lost = [pk for pk in self.queue_ids if pk not in allowed]
        if lost:
            await self._leave(lost)
            if not self.queue_ids:  # (a user who never had a queue keeps an idle socket)
                await self._gone(NO_ACCESS)

    async def reconnect(self) -> None:
        """Close with 4013 ("try again later"): a queue's reader lost the channel layer
        (``hub.py``). The page reconnects and reads what it missed (``live.js``)."""
        await self._gone(TRY_AGAIN)

    async def _leave(self, queue_ids: list[int]) -> None:
        self.queue_ids = [pk for pk in self.queue_ids if pk not in queue_ids]
        for pk in queue_ids:
            await hub.leave(self, pk)

    async def _gone(self, code: int) -> None:
        """Send nothing more, leave every queue and close with ``code`` (once)."""
        if self.gone:
            return
        self.gone = True
        self.sender.stop()
        await self._leave(list(self.queue_ids))
        await self.close(code=code)


def session_hash(session_key: str) -> str:
    """What names a login session in messages and groups (a hash: the key itself is a secret)."""
    return hashlib.sha256(session_key.encode()).hexdigest()[:40]


def session_group(session_key: str) -> str:
    """The Channels group of one login session's sockets."""
    return "inbox.session." + session_hash(session_key)


def close_on_logout(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """``user_logged_out`` receiver: close the inbox sockets of the session logging out now.

    Told through every queue's group, whose reader (``hub.py``) closes the session's sockets
    before it hands them any message published after this one, and through the session's own
    group for a socket that watches no queue."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if not session_key:
        return
    message = {"type": "inbox.signed_out", "session": session_hash(session_key)}
    try:
        for pk in Queue.objects.values_list("pk", flat=True):
            publish(group_name(pk), message)
        publish(session_group(session_key), message)
    except Exception:  # the logout itself must not fail; the next access check closes them
        logger.exception("Could not tell the inbox sockets of a logout")
