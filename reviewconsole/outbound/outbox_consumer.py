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

__all__ = ["interrupt_data", "outbound_consume", "outbound_wants"]

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


def _event_type(event: DomainEvent) -> str | None:
    if isinstance(event, SessionStatusChanged):
        return _SESSION_EVENTS.get(event.status)
    if isinstance(event, InterruptOpened):
        return "interrupt.created"
    if isinstance(event, InterruptAnswered) or (isinstance(event, InterruptCancelled) and event.cause != "restored"):
        return "interrupt.resolved"
    return None


def outbound_wants(event: DomainEvent) -> bool:
    """Whether ``event`` stands for an outbound event while an enabled subscription exists
    (``enabled_subscriptions``: dropped on every Subscription save and delete in this process,
    re-read by others within ``SUBSCRIPTIONS_TTL``, as the handler itself reads it)."""
    return _event_type(event) is not None and bool(enabled_subscriptions())


def outbound_consume(event: DomainEvent, outbox_id: int) -> None:
    """Emit the outbound event ``event`` stands for, if any subscription wants it."""
    event_type = _event_type(event)
    if event_type is None or not enabled_subscriptions():
        return
    if isinstance(event, SessionStatusChanged):
        data: dict[str, Any] = {"session_id": event.session_id, "workflow": event.workflow, "status": event.status}
        if event.status == "completed":
            data["output"] = event.output
        else:
            data["error"] = {"code": event.error_code or "error", "node_path": event.error_node_path}
        event_emit(event_type=event_type, workflow=event.workflow, data=data, outbox_id=outbox_id)
        return
    row = Item.objects.select_related("queue", "session").filter(session_interrupt_id=event.interrupt_pk).first()
    if row is not None:
        event_emit(event_type=event_type, workflow=row.session.workflow, data=interrupt_data(row), outbox_id=outbox_id)
