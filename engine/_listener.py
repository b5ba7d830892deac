"""Run listeners: what a host sees of a run while it happens.

A run's listener (``Runner.run_pending(..., listener=...)``) is told, in order and on the run's
event loop:

- ``on_event(event)``: every event a node emits (before it is stored) and every partial event
  a model streams (``event.partial``, text deltas; never stored);
- ``on_node_start(path, name)``: a node activation starts or resumes running in this run
  (``path`` is its node path, e.g. ``wf@1/draft@2``; ``name`` the node's name);
- ``on_node_end(path, status)``: it stopped: ``"completed"``, ``"waiting"`` (paused on
  interrupts or a message), ``"failed"`` or ``"cancelled"`` (stopped because a sibling failed).

Every ``on_node_start`` is followed by exactly one ``on_node_end`` for the same path, unless the
run itself raises. The root, every workflow node, every parallel-worker item and every node that
an agent runs as a tool (``agent@1/tool@<call id>``) is reported; a leaf completed by its answer
on resume (it does not run again) is reported as a start and an end in the run that resumes it.

A plain callable ``listener(event)`` is the short form: it receives the events only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ._events import Event

__all__ = ["Listener", "NodeStatus", "RunListener", "as_listener"]


class NodeStatus:
    """Values of ``status`` in :meth:`RunListener.on_node_end`."""

    COMPLETED = "completed"
    WAITING = "waiting"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RunListener(Protocol):
    """A listener object (see the module docstring); every method is called on the run's loop."""

    def on_event(self, event: Event) -> None: ...

    def on_node_start(self, path: str, name: str) -> None: ...

    def on_node_end(self, path: str, status: str) -> None: ...


Listener = Callable[[Event], None] | RunListener
"""What ``listener=`` takes: a :class:`RunListener` or a callable receiving events only."""


class _EventsOnly:
    """The callable short form as a :class:`RunListener`."""

    def __init__(self, callback: Callable[[Event], None]) -> None:
        self._callback = callback

    def on_event(self, event: Event) -> None:
        self._callback(event)

    def on_node_start(self, path: str, name: str) -> None:
        return None

    def on_node_end(self, path: str, status: str) -> None:
        return None


def as_listener(listener: Listener | None) -> RunListener | None:
    """``listener`` as a :class:`RunListener` (a callable is wrapped; None stays None)."""
    if listener is None:
        return None
    if hasattr(listener, "on_event"):
        return listener  # type: ignore[return-value]
    if callable(listener):
        return _EventsOnly(listener)
    raise TypeError("listener must be a RunListener or a callable taking an Event.")
