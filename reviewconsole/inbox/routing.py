"""Which queue an interrupt goes to: its own ``metadata["queue"]``, else its workflow's queue,
else the triage queue. Items are never left without a queue: a queue named but missing falls
back to triage, which is created on demand."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group

from ..workflows import UnknownWorkflowError, get
from .models import Queue

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["queue_for", "triage_queue"]


def triage_queue() -> Queue:
    """The default queue for items nobody else takes (created with its group if missing)."""
    slug = settings.REVIEWCONSOLE["TRIAGE_QUEUE"]
    queue = Queue.objects.filter(slug=slug).first()
    if queue is None:
        group, _ = Group.objects.get_or_create(name=f"queue:{slug}")
        queue, _ = Queue.objects.get_or_create(slug=slug, defaults={"name": "Triage", "group": group})
    return queue


def queue_for(workflow: str, metadata: dict[str, Any]) -> Queue:
    """The queue for an interrupt of ``workflow`` with this metadata."""
    slug = metadata.get("queue")
    if not slug:
        try:
            slug = get(workflow).queue
        except UnknownWorkflowError:
            slug = None
    queue = Queue.objects.filter(slug=slug).first() if slug else None
    if queue is None:
        if slug:
            logger.warning("Queue %r of workflow %s does not exist; routing to triage", slug, workflow)
        queue = triage_queue()
    return queue
