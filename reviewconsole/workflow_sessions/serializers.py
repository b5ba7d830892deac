"""A session as JSON: one serialiser for the API (``GET /api/v1/sessions/<id>``) and the
console's session JSON (``GET /api/sessions/<id>/``).

Its items are the inbox's: the doors add them (``inbox.serializers.item_json``), as this app
imports nothing from the apps downstream of it.
"""

from __future__ import annotations

from typing import Any

from .event_rows import COLUMNS, event_json
from .models import WorkflowSession
from .outcome import session_result

__all__ = ["public_error", "session_json"]


def public_error(error: Any) -> dict[str, Any] | None:
    """A failed session's error as outsiders see it: ``{"code", "node_path"}``, never its message
    (that may quote an exception, which stays in the server log); None when there is none."""
    if not isinstance(error, dict):
        return None
    return {"code": error.get("code", "error"), "node_path": error.get("node_path")}


def session_json(session: WorkflowSession) -> dict[str, Any]:
    """``{"id", "workflow", "status", "title", "state", "output" (the workflow's final result once it
    completed, else None), "error": public_error, "result": str | None (for people, once it ended:
    :func:`.outcome.session_result`), "created_at", "updated_at" (ISO 8601), "events": [ADK
    session JSON, by seq]}``."""
    return {
        "id": session.id,
        "workflow": session.workflow,
        "status": session.status,
        "title": session.title,
        "state": session.state,
        "output": session.output,
        "error": public_error(session.error),
        "result": session_result(session),
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
        "events": [event_json(*row) for row in session.events.order_by("seq").values_list(*COLUMNS)],
    }
