"""The inbox's "Sessions that failed": the failed sessions a user's queues hold or whose workflow they manage."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, Subquery

from ...workflow_sessions.models import SessionStatus, WorkflowSession
from ...workflow_sessions.outcome import session_result
from ..models import Item

__all__ = ["failed_sessions"]


def failed_sessions(queue_ids: list[int], workflows: list[str], *, limit: int = 20) -> list[dict[str, Any]]:
    """The newest failed sessions (``updated_at`` descending, at most ``limit``) that have an item
    in ``queue_ids``, or that have no item at all and belong to one of ``workflows`` (those whose
    queue the user manages: a session that failed before its first request is theirs to retry).

    Returns ``{"session", "item", "message"}`` each: ``item`` is the pk of the session's newest
    item in ``queue_ids`` (its page offers the Retry), or None (follow the session at
    ``/sessions/<id>/``, which offers it); ``message`` is :func:`session_result`. One query,
    filtered and ordered in the database: it walks the index ``session_status_updated`` backwards
    and looks up each session's items through the index on ``inbox_item.session_id``.
    """
    if not queue_ids and not workflows:
        return []
    items = Item.objects.filter(session_id=OuterRef("pk"))
    newest = items.filter(queue_id__in=queue_ids).order_by("-pk").values("pk")[:1]
    rows = (
        WorkflowSession.objects.filter(status=SessionStatus.FAILED)
        .annotate(item=Subquery(newest))
        .filter(Q(item__isnull=False) | Q(~Exists(items), workflow__in=workflows))
        .order_by("-updated_at")[:limit]
    )
    return [{"session": s, "item": s.item, "message": session_result(s) or ""} for s in rows]
