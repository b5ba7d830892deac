"""Who hears a session's runs while they happen: run listeners registered by other apps.

The :func:`~.tasks.run_session` task asks every registered factory for a listener of the session
it is about to run (``factory(session) -> SessionRunListener | None``, ``session`` the
:class:`~.models.WorkflowSession` row with its ``metadata``). A factory returns None for
sessions that are not its own, so those runs pay nothing. The listeners it gets hear the run as
an :class:`engine.RunListener` does (``on_event``, ``on_node_start``, ``on_node_end``, on the
run's event loop, see ``engine/_listener.py``) and then ``on_run_end(status)`` once, on the
task's thread, when the run is over: also when it raised, and also when it found another run
holding the session's lease and returned at once. ``status`` is what the task returns (the
session's status, ``"interrupted"`` or ``"error"``).

A listener that raises is logged and never fails the run. This is how a door streams runs
without ``workflow_sessions`` importing it (AG-UI registers its factory in ``AppConfig.ready``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from engine import Event, RunListener

from .models import WorkflowSession

__all__ = ["SessionRunListener", "register_run_listener", "run_listener"]

logger = logging.getLogger("reviewconsole.runs")


class SessionRunListener(RunListener, Protocol):
    """An :class:`engine.RunListener` that is also told when the task's run is over."""

    def on_run_end(self, status: str) -> None: ...


Factory = Callable[[WorkflowSession], SessionRunListener | None]

_factories: list[Factory] = []


def register_run_listener(factory: Factory) -> None:
    """Consult ``factory`` for every run of the ``run_session`` task (once, however often registered)."""
    if factory not in _factories:
        _factories.append(factory)


def run_listener(session: WorkflowSession) -> SessionRunListener | None:
    """The listeners the registered factories give for ``session``, as one; None when there are none."""
    listeners = []
    for factory in _factories:
        try:
            listener = factory(session)
        except Exception:
            logger.exception("Run listener factory %r failed for session %s", factory, session.pk)
            continue
        if listener is not None:
            listeners.append(listener)
    return _Listeners(listeners) if listeners else None


class _Listeners:
    """Tells each listener in turn; one that raises is logged and the others still hear."""

    def __init__(self, listeners: list[SessionRunListener]) -> None:
        self._listeners = listeners

    def _each(self, method: str, *args: Any) -> None:
        for listener in self._listeners:
            try:
                getattr(listener, method)(*args)
            except Exception:
                logger.exception("Run listener %r failed in %s", listener, method)

    def on_event(self, event: Event) -> None:
        self._each("on_event", event)

    def on_node_start(self, path: str, name: str) -> None:
        self._each("on_node_start", path, name)

    def on_node_end(self, path: str, status: str) -> None:
        self._each("on_node_end", path, status)

    def on_run_end(self, status: str) -> None:
        self._each("on_run_end", status)
