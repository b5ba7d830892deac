"""The one way to send a Channels group message from sync code, a worker thread or another loop.

Project level (like ``json_errors.py``): the inbox's live push (``inbox/live/messages.py``) and
AG-UI's run progress (``agui/progress.py``) both send through it, and ``serve`` binds Daphne's loop
here. ``tests/test_group_sender.py`` fails when ``group_send`` is called anywhere else.

Where a message goes depends on the channel layer:

- the in-memory layer (the embedded default) is not thread-safe and lives on the loop its readers
  wait on: Daphne's in ``serve`` (:func:`bind_loop`), or an AG-UI stream's. Messages are handed
  to that loop in order and never awaited by the sender. With no loop bound, a caller with no
  running loop (tests, scripts) sends at once; one on a loop of its own (a run's) has no reader
  in this process to reach, and the message is dropped (:func:`send` returns False);
- any other layer (Redis, scale-out) is sent to from one sender thread per process with a loop
  of its own, in submission order.

:func:`submit` runs a job (one that reads committed rows and calls :func:`send`) on that same
thread, so a committing thread never waits for the channel layer (inline when the in-memory
layer has no loop to hand over to). Group messages are at most once: a full channel or a
restart drops them; readers catch up from the database (queue versions, the session's events).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer

from .thread_connections import recycle_connections

__all__ = ["Message", "bind_loop", "drain", "has_readers", "send", "submit"]

logger = logging.getLogger("reviewconsole.live")

Message = dict[str, Any] | Callable[[], dict[str, Any]]
"""A group message (its ``type`` names the consumer's handler), or a function building it when it
is sent (AG-UI batches what a run reported until then into one message)."""

Job = Callable[[], None]

_bound: asyncio.AbstractEventLoop | None = None  # the in-memory layer's loop
_pending: set[asyncio.Task[None]] = set()  # sends started on the bound loop, referenced until done
_jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_thread_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def bind_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Hand in-memory-layer messages to ``loop`` (Daphne's, a reader's), or stop doing so (None)."""
    global _bound
    _bound = loop


def send(group: str, message: Message) -> bool:
    """Send ``message`` to ``group`` from any thread or loop, in order, without waiting for it.

    Returns False when there is nowhere to send (no channel layer; an in-memory one nobody in
    this process reads). Never raises for the layer: a failed send is logged.
    """
    layer = get_channel_layer()
    if layer is None:
        return False
    if isinstance(layer, InMemoryChannelLayer):
        loop = _bound
        if loop is not None and loop.is_running():
            if _running_loop() is loop:
                task = loop.create_task(_group_send(layer, group, message))
                _pending.add(task)
                task.add_done_callback(_pending.discard)
            else:
                asyncio.run_coroutine_threadsafe(_group_send(layer, group, message), loop)
            return True
        if _running_loop() is not None:
            return False
        async_to_sync(_group_send)(layer, group, message)
        return True
    if threading.current_thread() is _thread and _thread_loop is not None:
        _thread_loop.run_until_complete(_group_send(layer, group, message))
        return True
    _put(lambda: send(group, message))
    return True


def has_readers(group: str) -> bool:
    """Whether a message to ``group`` could reach anyone: False only for the in-memory layer (or
    none) with nobody in the group, which is this process's whole audience; True for any other
    layer, whose readers are elsewhere. Lets a sender skip building a message nobody receives (a
    reader who joins just after catches up from the database, as after any lost message)."""
    layer = get_channel_layer()
    if layer is None:
        return False
    if isinstance(layer, InMemoryChannelLayer):
        return bool(layer.groups.get(group))
    return True


def submit(job: Job) -> None:
    """Run ``job`` on the sender thread, after what was submitted before (see the module docstring)."""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer) and (_bound is None or not _bound.is_running()):
        job()
        return
    _put(job)


def drain(timeout: float = 5.0) -> bool:
    """Wait until every job submitted so far is done (orderly shutdown, tests); True if so."""
    if _thread is None:
        return True
    done = threading.Event()
    _jobs.put(done.set)
    return done.wait(timeout)


async def _group_send(layer: BaseChannelLayer, group: str, message: Message) -> None:
    try:
        body = message() if callable(message) else message
        await layer.group_send(group, body)  # type: ignore[attr-defined]
    except Exception:  # at most once: readers catch up from the database
        logger.exception("Could not send a message to %s", group)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _put(job: Job) -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="group-sender", daemon=True)
            _thread.start()
    _jobs.put(job)


def _work() -> None:
    global _thread_loop
    _thread_loop = asyncio.new_event_loop()
    while True:
        job = _jobs.get()
        _recycle_connections()
        try:
            job()
        except Exception:  # a lost live message is caught up by its readers; keep sending
            logger.exception("A group message could not be sent")


def _recycle_connections() -> None:
    """Drop this thread's stale database connections before a job, as a request would (a healthy
    SQLite one is kept: ``thread_connections.py``); a failure here (the database unreachable) must
    not cost the job, which may not need the database."""
    try:
        recycle_connections()
    except Exception:
        logger.warning("The sender thread could not check its database connection", exc_info=True)
