"""The task that delivers one outbound message (retries re-enqueue it with ``run_after``)."""

from __future__ import annotations

from django.tasks import task

from .services import message_deliver

__all__ = ["deliver_message"]


@task()
def deliver_message(message_id: str) -> str:
    """One delivery attempt of ``message_id``; returns the message's status afterwards."""
    return message_deliver(message_id=message_id)
