"""Outbound events as a consumer of the sessions' outbox (``workflow_sessions/outbox.py``).

Registered in ``apps.py`` after the inbox's consumer, so an interrupt's item (its queue) exists
when this runs. In the relay's transaction it writes one ``OutboundMessage`` per interested
subscription (``event_emit``), keyed by the outbox row's id: a row relayed again writes none twice.

| outbox event | outbound event |
|---|---|
| ``interrupt.opened`` | ``interrupt.created`` |
| ``interrupt.answered`` | ``interrupt.resolved`` |
| ``interrupt.cancelled`` (not by a checkpoint restore) | ``interrupt.resolved`` (``status: cancelled``) |
| ``session.status_changed`` to completed / failed | ``session.completed`` / ``session.failed`` |

Payload shapes are :func:`interrupt_data` and the session's ``{"session_id", "workflow",
"status", "output" | "error": {"code", "node_path"}}`` (never the error's message).
"""

from __future__ import annotations

from typing import Any

from ..inbox.items.serializers import item_json
from ..inbox.models import Item
from ..workflow_sessions.domain_events import (
    DomainEvent,
    InterruptAnswered,
    InterruptCancelled,
    InterruptOpened,
    SessionStatusChanged,
)
from .services import enabled_subscriptions, event_emit

__all__ = ["interrupt_data", "outbound_consume"]

_SESSION_EVENTS = {"completed": "session.completed", "failed": "session.failed"}


_INTERRUPT_FIELDS = (
    "session_id",
    "workflow",
    "kind",
    "function_name",
    "queue",
    "status",
    "message",
    "payload",
    "response",
    "decision",
    "decided_by",
    "decided_at",
    "created_at",
)


def interrupt_data(row: Item) -> dict[str, Any]:
    """An interrupt as outbound events describe it: the inbox's ``item_json``, its ``id`` named
    ``interrupt_id`` and only these fields (subscribers' payloads keep their keys)."""
    item = item_json(row)
    return {"interrupt_id": item["id"], **{name: item[name] for name in _INTERRUPT_FIELDS}}


def outbound_consume(event: DomainEvent, outbox_id: int) -> None:
    """Emit the outbound event ``event`` stands for, if any subscription wants it."""
    if not enabled_subscriptions():
        return
    if isinstance(event, SessionStatusChanged):
        if event.status not in _SESSION_EVENTS:
            return
        data: dict[str, Any] = {"session_id": event.session_id, "workflow": event.workflow, "status": event.status}
        if event.status == "completed":
            data["output"] = event.output
        else:
            data["error"] = {"code": event.error_code or "error", "node_path": event.error_node_path}
        event_emit(event_type=_SESSION_EVENTS[event.status], workflow=event.workflow, data=data, outbox_id=outbox_id)
        return
    if isinstance(event, InterruptOpened):
        event_type = "interrupt.created"
    elif isinstance(event, InterruptAnswered) or (isinstance(event, InterruptCancelled) and event.cause != "restored"):
        event_type = "interrupt.resolved"
    else:
        return
    row = Item.objects.select_related("queue", "session").filter(session_interrupt_id=event.interrupt_pk).first()
    if row is not None:
        event_emit(event_type=event_type, workflow=row.session.workflow, data=interrupt_data(row), outbox_id=outbox_id)
