"""Where a session stands and, once it ended, what it ended with.

A workflow may end with a text output (the refund agent's reply), with a structured output and a
message for people (the email review's ``{"decision", "email"}`` and "Draft approved and sent
successfully."), or only with a message (the incident triage), so the result people see is the
output when it is text, else for a failed session :func:`.failure.failure_message` (a generic
sentence and the error code, never the exception's text), for a cancelled one what its cancel
said (:func:`cancel_reason`: who cancelled it and why; never a draft it was waiting on, which
nobody sent), else the session's last message that no user wrote, else the output as JSON. The
text may come from an LLM or an outside caller: templates escape it, scripts set it with
``textContent``.
"""

from __future__ import annotations

import json
from typing import Any

from engine import SessionStatus

from .failure import failure_message
from .models import WorkflowSession
from .store_sql import has_unapplied_answers

__all__ = ["cancel_reason", "last_message", "session_outcome", "session_result"]

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


_CANCELLED = "The session was cancelled."  # the engine's words for a cancel without a reason


def cancel_reason(by: str, reason: str = "") -> str:
    """The words a cancel by ``by`` (``client:<name>``, a username) records, its result once
    cancelled: ``"Cancelled by <by>: <reason>"``, or ``"Cancelled by <by>."`` without a reason."""
    reason = reason.strip()
    return f"Cancelled by {by}: {reason}" if reason else f"Cancelled by {by}."


def _cancel_message(session: WorkflowSession) -> str:
    """What the cancel of ``session`` said: its event's ``errorMessage`` (the reason given, or the
    engine's "The session was cancelled."), the newest event with ``errorCode`` ``cancelled``
    among the last few; :data:`_CANCELLED` when none is found."""
    rows = session.events.order_by("-seq").values_list("data", flat=True)[:_LOOK_BACK]
    for data in rows:
        if isinstance(data, dict) and data.get("errorCode") == "cancelled":
            message = data.get("errorMessage")
            return message if isinstance(message, str) and message.strip() else _CANCELLED
    return _CANCELLED


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def session_result(session: WorkflowSession) -> str | None:
    """The session's final result once it ended (see the module docstring), else None."""
    if session.status not in ENDED:
        return None
    if isinstance(session.output, str):
        return session.output
    if session.status == SessionStatus.FAILED and session.error:
        return failure_message(session.error)  # never the exception's text (it may quote a key)
    if session.status == SessionStatus.CANCELLED:
        return _cancel_message(session)  # not the last message: a draft it waited on was never sent
    message = last_message(session)
    if message:
        return message
    return None if session.output is None else _text(session.output)


def _resuming(session: WorkflowSession) -> bool:
    """Waiting, with an answer stored that no run has applied yet: its run is queued."""
    return session.status == SessionStatus.WAITING and has_unapplied_answers(session.pk)


def session_outcome(session: WorkflowSession) -> dict[str, Any]:
    """``{"id", "status", "status_label", "ended", "resuming", "result"}`` for pages and JSON.

    ``status`` is the stored value. Between a decision and the run that applies it the session is
    still stored as ``waiting``: ``resuming`` is then True and ``status_label`` says "Resuming",
    not "Waiting for input" (no one is asked anything; the session goes on by itself). A page
    asks again while ``resuming`` or ``status`` is ``new`` or ``running``.
    """
    resuming = _resuming(session)
    return {
        "id": session.id,
        "status": session.status,
        "status_label": "Resuming" if resuming else session.get_status_display(),  # the value when no label
        "ended": session.status in ENDED,
        "resuming": resuming,
        "result": session_result(session),
    }
