"""Sending live messages off the thread that committed the change.

A committed change is announced by reading it back and sending it to its queue's Channels group.
Doing that on the committing thread (a run's worker thread, or a reviewer's request) would make
every commit wait for the channel layer. :func:`submit` hands the work to one publisher thread per
process instead, which does it in submission order (so a queue's versions go out in order):

- with the in-memory channel layer bound to Daphne's event loop (the embedded ``serve``), the
  thread hands each message to that loop without waiting;
- with a channel layer shared between processes (Redis), the thread sends on an event loop of its own.

With the in-memory layer and no bound loop (tests, scripts) there is no Daphne to hand over to:
the work is done at once on the calling thread, as before.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import close_old_connections

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["bound_loop", "drain", "submit"]

Job = Callable[[], None]

_jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_bound: asyncio.AbstractEventLoop | None = None


def bound_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Hand in-memory-layer messages to ``loop`` (Daphne's), or stop doing so (None)."""
    global _bound
    _bound = loop


def send(group: str, message: dict[str, Any]) -> None:
    """Send one group message from the publisher thread (or the caller, see the module docstring)."""
    layer = get_channel_layer()
    if layer is None:
        return
    bound = _bound
    if isinstance(layer, InMemoryChannelLayer) and bound is not None and bound.is_running():
        asyncio.run_coroutine_threadsafe(layer.group_send(group, message), bound)
        return
    if _loop is not None and threading.current_thread() is _thread:
        _loop.run_until_complete(layer.group_send(group, message))
        return
    async_to_sync(layer.group_send)(group, message)


def _inline() -> bool:
    layer = get_channel_layer()
    return isinstance(layer, InMemoryChannelLayer) and (_bound is None or not _bound.is_running())


def submit(job: Job) -> None:
    """Run ``job`` (which reads committed rows and calls :func:`send`) on the publisher thread."""
    if get_channel_layer() is None:
        return
    if _inline():
        job()
        return
    _ensure_thread()
    _jobs.put(job)


def drain(timeout: float = 5.0) -> bool:
    """Wait until every job submitted so far is done (for orderly shutdown and tests); True if so."""
    if _thread is None:
        return True
    done = threading.Event()
    _jobs.put(done.set)
    return done.wait(timeout)


def _ensure_thread() -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="live-publisher", daemon=True)
            _thread.start()


def _work() -> None:
    global _loop
    _loop = asyncio.new_event_loop()
    while True:
        job = _jobs.get()
        if job is None:
            return
        try:
            close_old_connections()
            job()
        except Exception:  # a lost live message is caught up by clients (versions); keep publishing
            logger.exception("A live message could not be sent")
