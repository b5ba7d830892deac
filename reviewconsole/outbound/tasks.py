"""The task that delivers one outbound message (retries re-enqueue it with ``run_after``).

It is queued on :data:`QUEUE`, not on the runs' ``default`` queue: a receiver that accepts the
connection and never answers holds the thread that delivers to it for ``OUTBOUND_TIMEOUT``
seconds per attempt, and the threads that serve this queue (``serve --outbound-workers``,
``manage.py worker --outbound-threads``) are not the ones session runs wait for.
"""

from __future__ import annotations

from django.tasks import TaskContext, task, task_backends

from .services import message_deliver

__all__ = ["QUEUE", "deliver_message"]

QUEUE = "outbound"
"""The django-tasks queue deliveries go to when the backend lists it in ``TASKS["default"]["QUEUES"]``
(else ``default``, with the system check ``outbound.W001``)."""


@task(takes_context=True)
def deliver_message(context: TaskContext, message_id: str) -> str:
    """One attempt at sending ``message_id``; returns the message's status afterwards.

    ``context.attempt`` above 1 means this task was claimed before by a worker that died
    (``console/task_recovery.py`` queued it again): an attempt it claimed and never recorded was
    cut off mid-send.
    """
    return message_deliver(message_id=message_id, after_crash=context.attempt > 1)


def delivery_queue() -> str:
    """:data:`QUEUE` when the default task backend lists it (or lists no queues), else ``default``."""
    queues = task_backends["default"].queues
    return QUEUE if not queues or QUEUE in queues else deliver_message.queue_name
