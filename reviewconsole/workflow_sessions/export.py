"""A session as an ADK session trace (``{"events": [...]}``, camelCase), which the engine can replay.

The shape is ``shared/conformance/adk/TRACE-FORMAT.md``'s: ``appName``, ``id``, ``userId``,
``state`` and the stored events in order, each as the engine wrote it (ADK session JSON).
"""

from __future__ import annotations

from typing import Any

from .event_rows import COLUMNS, event_json
from .models import WorkflowSession

__all__ = ["session_export"]


def session_export(session: WorkflowSession) -> dict[str, Any]:
    """The session's trace: its events as written, in order, with its app name, id, user and state."""
    return {
        "appName": session.workflow,
        "id": session.id,
        "userId": session.user_id,
        "state": session.state,
        "events": [event_json(*row) for row in session.events.order_by("seq").values_list(*COLUMNS)],
    }
