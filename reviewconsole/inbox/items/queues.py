"""Queues for the registered workflows: each with its reviewers group (``queue:<slug>``) and its
managers group (``managers:<slug>``), created when missing (``manage.py sync_workflows``, ``demo``)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from ...workflows import WorkflowSpec, all_specs
from ..models import Queue

__all__ = ["queue_ensure", "workflow_queue_slugs", "workflow_queues_sync"]


def workflow_queue_slugs(specs: list[WorkflowSpec] | None = None) -> list[str]:
    """Every queue the workflows route or escalate to (``escalate_to``, ``escalate_queues``), and
    triage, sorted (``specs``: the registry's)."""
    specs = all_specs() if specs is None else specs
    slugs = {s.queue for s in specs} | {s.escalate_to for s in specs if s.escalate_to}
    slugs |= {slug for s in specs for slug in s.escalate_queues if slug}
    return sorted(slugs | {settings.REVIEWCONSOLE["TRIAGE_QUEUE"]})


def queue_ensure(slug: str) -> tuple[Queue, bool]:
    """The queue ``slug``, created (named after its slug, reviewers ``queue:<slug>``) when missing,
    with ``managers:<slug>`` as its managers when it has none; and whether it was created."""
    queue_group, _ = Group.objects.get_or_create(name=f"queue:{slug}")
    managers, _ = Group.objects.get_or_create(name=f"managers:{slug}")
    queue, created = Queue.objects.get_or_create(
        slug=slug, defaults={"name": slug.replace("-", " ").replace("_", " ").title(), "group": queue_group}
    )
    if queue.managers_id is None:
        queue.managers = managers
        queue.save(update_fields=["managers"])
    return queue, created


@transaction.atomic
def workflow_queues_sync() -> list[str]:
    """Create what is missing for every registered workflow's queues (idempotent); the slugs created."""
    return [slug for slug in workflow_queue_slugs() if queue_ensure(slug)[1]]
