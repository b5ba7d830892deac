"""The task that delivers one outbound message (retries re-enqueue it with ``run_after``)."""

from __future__ import annotations

from django.tasks import TaskContext, task

from .services import message_deliver

__all__ = ["deliver_message"]


@task(takes_context=True)
def deliver_message(context: TaskContext, message_id: str) -> str:
    """One attempt at sending ``message_id``; returns the message's status afterwards.

    ``context.attempt`` above 1 means this task was claimed before by a worker that died
    (``console/task_recovery.py`` queued it again): an attempt it claimed and never recorded was
    cut off mid-send.
    """
    return message_deliver(message_id=message_id, after_crash=context.attempt > 1)
