"""The inbox websocket (``/ws/inbox/``): one Channels group per queue, joined only for the user's queues.

On connect the consumer joins the groups, then says ``{"event": "hello", "queues": n,
"versions": {queue_id: version}, "heartbeat": seconds}``: versions read *after* joining, so a
client comparing them with its own knows whether it missed a change between its page load and
this moment (and asks ``/inbox/changes.json`` for it). Group messages follow, each with its
queue's version. ``{"type": "ping"}`` is answered ``{"event": "pong"}``: the client's heartbeat,
which tells it within 2.25 intervals (22.5 s by default) that a socket died without a close frame.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .changes import current_versions
from .conf import inbox_setting
from .live import group_name
from .selectors import queues_for


class InboxConsumer(AsyncJsonWebsocketConsumer):
    """Forwards ``inbox.message`` group messages to a logged-in reviewer of the queue."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        queue_ids = await database_sync_to_async(lambda: [q.pk for q in queues_for(user)])()
        self.queue_ids = queue_ids
        self.groups_joined = [group_name(pk) for pk in queue_ids]
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        versions = await database_sync_to_async(current_versions)(queue_ids)
        await self.accept()
        await self.send_json(
            {
                "event": "hello",
                "queues": len(self.groups_joined),
                "versions": {str(k): v for k, v in versions.items()},
                "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
            }
        )

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            # The versions let an idle page notice a message it never got (e.g. one published while
            # the channel layer was away): it is behind, so it catches up.
            versions = await database_sync_to_async(current_versions)(self.queue_ids)
            await self.send_json({"event": "pong", "versions": {str(k): v for k, v in versions.items()}})

    async def inbox_message(self, message: dict[str, Any]) -> None:
        await self.send_json(
            {
                "event": message["event"],
                "queue": message["queue"],
                "version": message["version"],
                "item": message["item"],
            }
        )
