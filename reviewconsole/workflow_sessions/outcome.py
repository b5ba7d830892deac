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

import engine

from .failure import failure_message
from .models import SessionStatus, WorkflowSession

__all__ = ["failed_sessions", "last_message", "session_outcome", "session_result"]

ENDED = engine.SessionStatus.CLOSED  # completed, failed, cancelled: nothing runs again

_LOOK_BACK = 50  # events searched, newest first, for the last message
_FAILED_LOOK_AT = 500  # failed sessions the inbox looks at for its "Sessions that failed"


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
    status = SessionStatus(session.status) if session.status in SessionStatus.values else None
    return {
        "id": session.id,
        "status": session.status,
        "status_label": status.label if status is not None else session.status,
        "ended": session.status in ENDED,
        "result": session_result(session),
    }


def failed_sessions(queue_ids: list[int], *, limit: int = 20) -> list[dict[str, Any]]:
    """Failed sessions with an item in ``queue_ids``, newest first: ``{"session", "item", "message"}`` each.

    ``item`` is the pk of the session's newest item there (its page offers the Retry);
    ``message`` is the failure's own sentence (:func:`session_result`). Both queries walk an index
    (sessions by status, items by session) and sort nothing in the database; at most
    ``_FAILED_LOOK_AT`` failed sessions are looked at.
    """
    from ..inbox.models import Interrupt

    if not queue_ids:
        return []
    sessions = {
        s.pk: s for s in WorkflowSession.objects.filter(status=SessionStatus.FAILED).order_by()[:_FAILED_LOOK_AT]
    }
    newest: dict[str, int] = {}
    items = Interrupt.objects.filter(session_id__in=list(sessions), queue_id__in=queue_ids).order_by()
    for session_id, pk in items.values_list("session_id", "pk"):
        newest[session_id] = max(pk, newest.get(session_id, 0))
    found = sorted((sessions[sid] for sid in newest), key=lambda s: s.updated_at, reverse=True)[:limit]
    return [{"session": s, "item": newest[s.pk], "message": session_result(s) or ""} for s in found]
