"""A session's run as it happens, over the Channels layer: published by the worker, read by the stream.

The ``run_session`` task (wherever it runs: ``serve``'s worker threads, ``manage.py worker``, the
test suite's immediate backend) asks :func:`listener_for` for a listener
(``workflow_sessions.listeners``); for a session an AG-UI thread started
(``metadata["source"] == "agui"``) it gets a :class:`ProgressListener`, which sends each thing the
run reports to the group :func:`group_name` as JSON (channels_redis packs it with msgpack): a
message ``{"type": "session.progress", "items": [...]}`` holds, in order, what was reported since
the previous one:

| item ``kind`` | other keys | from |
|---|---|---|
| ``event`` | ``event``: ``engine.Event.to_json()`` (a complete event) | ``on_event`` |
| ``delta`` | ``id`` (the event's), ``path`` (its node path), ``text`` | ``on_event``, a partial event with text |
| ``node_start`` | ``path``, ``name`` | ``on_node_start`` |
| ``node_end`` | ``path``, ``status`` | ``on_node_end`` |
| ``run_end`` | ``status`` (what the task returns) | the task's ``finally`` |

Messages are at most once (a full channel or a restart drops them): readers take the store as
the truth and catch up from it at the end.

Sending from a worker thread goes through the project's one cross-loop sender,
``reviewconsole/group_sender.py``: the in-memory layer (the embedded default) lives on the loop its
readers wait on (Daphne's in ``serve``), which :class:`Progress` binds there; any other layer
(Redis, scale-out) is sent to from its sender thread, in order; never awaited by the run.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer

from engine import Event

from .. import group_sender
from ..workflow_sessions.models import WorkflowSession

__all__ = ["MESSAGE_TYPE", "Progress", "ProgressListener", "group_name", "listener_for"]

MESSAGE_TYPE = "session.progress"


def group_name(session_id: str) -> str:
    """The Channels group a session's run progress goes to."""
    return f"session.{session_id}"


def listener_for(session: WorkflowSession) -> ProgressListener | None:
    """A :class:`ProgressListener` for a session an AG-UI thread started, else None (no cost)."""
    if (session.metadata or {}).get("source") != "agui":
        return None
    return ProgressListener(session.pk)


class ProgressListener:
    """A ``workflow_sessions.listeners.SessionRunListener`` that publishes to the session's group.

    What the run reports is buffered and sent as soon as the reader's loop (or the sender thread)
    gets to it, everything buffered by then in one message (``items``), so a burst of text deltas
    costs one group message and no run waits for the channel layer.
    """

    def __init__(self, session_id: str) -> None:
        self.group = group_name(session_id)
        self._items: list[dict[str, Any]] = []
        self._scheduled = False
        self._lock = threading.Lock()

    def on_event(self, event: Event) -> None:
        if not event.partial:
            self._add({"kind": "event", "event": event.to_json()})
        elif event.text:  # a streamed delta: only what AG-UI says of it
            self._add({"kind": "delta", "id": event.id, "path": event.node_info.path, "text": event.text})

    def on_node_start(self, path: str, name: str) -> None:
        self._add({"kind": "node_start", "path": path, "name": name})

    def on_node_end(self, path: str, status: str) -> None:
        self._add({"kind": "node_end", "path": path, "status": status})

    def on_run_end(self, status: str) -> None:
        self._add({"kind": "run_end", "status": status})

    def _add(self, item: dict[str, Any]) -> None:
        with self._lock:
            self._items.append(item)
            if self._scheduled:  # the send already on its way takes this item too
                return
            self._scheduled = True
        if not group_sender.send(self.group, self._take):
            with self._lock:
                self._items.clear()
                self._scheduled = False

    def _take(self) -> dict[str, Any]:
        """The message of everything buffered so far (built when it is sent)."""
        with self._lock:
            items, self._items = self._items, []
            self._scheduled = False
        return {"type": MESSAGE_TYPE, "items": items}


class Progress:
    """``async with Progress(session_id) as progress``: the stream's subscription to the session's
    group, joined on entry (before the run is queued, so nothing it sends is missed) and left on exit."""

    def __init__(self, session_id: str) -> None:
        self.group = group_name(session_id)
        self.channel = ""

    async def __aenter__(self) -> Progress:
        layer = get_channel_layer()
        if layer is None:
            return self
        if isinstance(layer, InMemoryChannelLayer):
            group_sender.bind_loop(asyncio.get_running_loop())
        self.channel = await layer.new_channel("agui")
        await layer.group_add(self.group, self.channel)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        layer = get_channel_layer()
        if layer is not None and self.channel:
            await layer.group_discard(self.group, self.channel)

    async def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next progress message, or None when none came within ``timeout`` seconds."""
        layer = get_channel_layer()
        if layer is None or not self.channel or timeout <= 0:
            return None
        try:
            message: dict[str, Any] = await asyncio.wait_for(layer.receive(self.channel), timeout)
        except TimeoutError:
            return None
        return message
