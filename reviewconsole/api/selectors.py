"""Reads for API clients, always limited to the workflows a client's token is scoped to.

The sessions of the built-in ``review`` workflow (``POST /api/v1/reviews``) are the reviews of the
client that asked them: no other client sees, answers or cancels them through ``/sessions`` or
``/interrupts`` (as ``GET /reviews/{id}`` says ``404`` for another client's review), whatever its
workflows; the asking client may (e.g. answer its own review as ``client:<name>``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from ..inbox.models import Item
from ..workflow_sessions.models import WorkflowSession
from ..workflows import review as review_workflow
from .errors import ApiError
from .models import ApiClient

__all__ = ["interrupts_for", "session_for"]


def _scoped(client: ApiClient, rows: QuerySet[Any], field: str) -> QuerySet[Any]:
    """``rows`` (sessions, or rows whose ``field`` is their session's workflow) the client may see."""
    owner = field.removesuffix("workflow") + "user_id"
    rows = rows.filter(~Q(**{field: review_workflow.NAME}) | Q(**{f"{owner}__in": client.session_owners}))
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
) -> QuerySet[Item]:
    """Interrupts of the client's workflows, oldest first, filtered by workflow, queue and status."""
    rows = Item.objects.select_related("queue", "session", "claimed_by").filter(status=status)
    rows = _scoped(client, rows, "session__workflow")
    if client.own_sessions_only:
        rows = rows.filter(session__user_id__in=client.session_owners)
    if workflow:
        rows = rows.filter(session__workflow=workflow)
    if queue:
        rows = rows.filter(queue__slug=queue)
    return rows.order_by("created_at", "id")
