"""Where a session stands and, once it ended, what it ended with.

A workflow may end with an output (the refund agent's reply) or only with a message (the email
review's "Draft approved and sent successfully."), so the result people see is the output, else
for a failed session :func:`.failure.failure_message` (a generic sentence and the error code, never
the exception's text), else the session's last message that no user wrote. The text may come
from an LLM or an outside caller: templates escape it, scripts set it with ``textContent``.
"""

from __future__ import annotations

import json
from typing import Any

from engine import SessionStatus

from .failure import failure_message
from .models import WorkflowSession

__all__ = ["failed_sessions", "last_message", "session_outcome", "session_result"]

ENDED = SessionStatus.CLOSED  # completed, failed, cancelled: nothing runs again

_LOOK_BACK = 50  # events searched, newest first, for the last message


def last_message(session: WorkflowSession) -> str:
    """The newest text of the session written by the workflow (not by a user), or ""."""
    rows = session.events.exclude(author="user").order_by("-seq").values_list("data", flat=True)[:_LOOK_BACK]
    for data in rows:
        parts = (data.get("content") or {}).get("parts", []) if isinstance(data, dict) else []
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
        if text.strip() and not (isinstance(data, dict) and data.get("partial")):
            return text
    return ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def session_result(session: WorkflowSession) -> str | None:
    """The session's final result once it ended (see the module docstring), else None."""
    if session.status not in ENDED:
        return None
    if session.output is not None:
        return _text(session.output)
    if session.status == SessionStatus.FAILED and session.error:
        return failure_message(session.error)  # never the exception's text (it may quote a key)
    return last_message(session) or None


def session_outcome(session: WorkflowSession) -> dict[str, Any]:
    """``{"id", "status", "status_label", "ended", "result"}`` for pages and JSON."""
    return {
        "id": session.id,
        "status": session.status,
        "status_label": session.get_status_display(),  # the value itself when it has no label
        "ended": session.status in ENDED,
        "result": session_result(session),
    }


def failed_sessions(queue_ids: list[int], workflows: list[str], *, limit: int = 20) -> list[dict[str, Any]]:
    """The newest failed sessions (``updated_at`` descending, at most ``limit``) that have an item
    in ``queue_ids``, or that have no item at all and belong to one of ``workflows`` (those whose
    queue the user manages: a session that failed before its first request is theirs to retry).

    Returns ``{"session", "item", "message"}`` each: ``item`` is the pk of the session's newest
    item in ``queue_ids`` (its page offers the Retry), or None (follow the session at
    ``/sessions/<id>/``, which offers it); ``message`` is :func:`session_result`. One query,
    filtered and ordered in the database: it walks the index ``session_status_updated`` backwards
    and looks up each session's items through the index on ``inbox_interrupt.session_id``.
    """
    from django.db.models import Exists, OuterRef, Q, Subquery

    from ..inbox.models import Interrupt

    if not queue_ids and not workflows:
        return []
    items = Interrupt.objects.filter(session_id=OuterRef("pk"))
    newest = items.filter(queue_id__in=queue_ids).order_by("-pk").values("pk")[:1]
    rows = (
        WorkflowSession.objects.filter(status=SessionStatus.FAILED)
        .annotate(item=Subquery(newest))
        .filter(Q(item__isnull=False) | Q(~Exists(items), workflow__in=workflows))
        .order_by("-updated_at")[:limit]
    )
    return [{"session": s, "item": s.item, "message": session_result(s) or ""} for s in rows]
