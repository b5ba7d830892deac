"""The inbox websocket (``/ws/inbox/``): one Channels group per queue, joined only for the user's queues."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .live import group_name
from .selectors import queues_for


class InboxConsumer(AsyncJsonWebsocketConsumer):
    """Forwards ``inbox.message`` group messages to a logged-in reviewer of the queue."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.groups_joined = await database_sync_to_async(lambda: [group_name(q.pk) for q in queues_for(user)])()
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self.send_json({"event": "hello", "queues": len(self.groups_joined)})

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"event": "pong"})

    async def inbox_message(self, message: dict[str, Any]) -> None:
        await self.send_json({"event": message["event"], "item": message["item"]})
