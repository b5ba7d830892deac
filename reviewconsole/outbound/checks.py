"""The outbound app's system check: deliveries have a task queue of their own.

``outbound.W001``: ``TASKS["default"]["QUEUES"]`` does not list ``outbound.tasks.QUEUE``, so
deliveries go to ``default`` and a receiver that never answers holds a thread session runs wait for.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Warning, register
from django.tasks import task_backends

from .tasks import QUEUE

__all__ = ["outbound_queue"]


@register()
def outbound_queue(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    queues = task_backends["default"].queues
    if not queues or QUEUE in queues:
        return []
    return [
        Warning(
            f"TASKS['default']['QUEUES'] does not list {QUEUE!r}: outbound deliveries share the runs' queue, "
            "and a receiver that never answers holds a thread a session's run waits for.",
            hint=f"Add {QUEUE!r} to TASKS['default']['QUEUES'] (serve and manage.py worker serve it).",
            id="outbound.W001",
        )
    ]
