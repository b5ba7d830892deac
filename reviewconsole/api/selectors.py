"""Reads for API clients, always limited to the workflows a client's token is scoped to."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from ..inbox.models import Interrupt
from ..workflow_sessions.models import WorkflowSession
from .errors import ApiError
from .models import ApiClient

__all__ = ["interrupt_summary", "interrupts_for", "session_detail", "session_for"]


def _scoped(client: ApiClient, rows: QuerySet[Any], field: str) -> QuerySet[Any]:
    if "*" in client.workflows:
        return rows
    return rows.filter(**{f"{field}__in": [w for w in client.workflows if isinstance(w, str)]})


def session_for(client: ApiClient, session_id: str) -> WorkflowSession:
    """The session if the client may see it.

    Raises:
        ApiError: 404 ``session_not_found``, also when it exists outside the client's scope (so
            a client learns nothing about other workflows' sessions), and for a session another
            client started when the token has the ``own_sessions`` scope.
    """
    rows = _scoped(client, WorkflowSession.objects.all(), "workflow")
    if client.own_sessions_only:
        rows = rows.filter(user_id__in=client.session_owners)
    session = rows.filter(pk=session_id).first()
    if session is None:
        raise ApiError(404, "session_not_found", "No such session.")
    return session


def interrupts_for(
    client: ApiClient, *, workflow: str | None = None, queue: str | None = None, status: str = "pending"
) -> QuerySet[Interrupt]:
    """Interrupts of the client's workflows, oldest first, filtered by workflow, queue and status."""
    rows = Interrupt.objects.select_related("queue", "session").filter(status=status)
    rows = _scoped(client, rows, "session__workflow")
    if client.own_sessions_only:
        rows = rows.filter(session__user_id__in=client.session_owners)
    if workflow:
        rows = rows.filter(session__workflow=workflow)
    if queue:
        rows = rows.filter(queue__slug=queue)
    return rows.order_by("created_at", "id")


def interrupt_summary(row: Interrupt) -> dict[str, Any]:
    """One interrupt as the API shows it."""
    return {
        "id": row.interrupt_id,
        "session_id": row.session_id,
        "workflow": row.session.workflow,
        "kind": row.kind,
        "function_name": row.function_name,
        "status": row.status,
        "queue": row.queue.slug,
        "message": row.message,
        "payload": row.payload,
        "response_schema": row.response_schema,
        "response": row.response,
        "decision": row.decision,
        "decided_by": row.decided_by_label or None,
        "decided_at": row.decided_at.isoformat() if row.decided_at else None,
        "created_at": row.created_at.isoformat(),
    }


def session_detail(session: WorkflowSession) -> dict[str, Any]:
    """Status, state, output, interrupts and events (ADK session JSON) of one session."""
    interrupts = Interrupt.objects.filter(session=session).select_related("queue", "session").order_by("id")
    return {
        "id": session.id,
        "workflow": session.workflow,
        "status": session.status,
        "title": session.title,
        "state": session.state,
        "output": session.output,
        "error": _public_error(session.error),
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
        "interrupts": [interrupt_summary(i) for i in interrupts],
        "events": list(session.events.order_by("seq").values_list("data", flat=True)),
    }


def _public_error(error: Any) -> Any:
    """A failed session's error code and node, without its message: that may quote an exception
    (which stays in the server log)."""
    if not isinstance(error, dict):
        return None
    return {"code": error.get("code", "error"), "node_path": error.get("node_path")}
