"""Where an item may be escalated to: the queues its workflow and the item itself allow.

"Allowed" (docs/architecture.md, "Lifecycle"): the queues named by the item's ``escalate_to`` and
``metadata["escalate_queues"]`` (an interrupt's ``RequestInput(metadata=…)``), then by its
workflow's spec (``WorkflowSpec.escalate_to``, ``escalate_queues``), that exist, in that order,
without repeats and without the item's own queue; when none is named or exists, the triage queue
(as expiry's escalation falls back to). Every reviewer of the item's queue may escalate to any of
them: escalating hands a request upwards, so they need not review the target queue; moving it
anywhere else is a manager's *reassign*.
"""

from __future__ import annotations

from ...workflows import UnknownWorkflowError, get
from ..models import Item, Queue
from .assignment import triage_queue

__all__ = ["escalation_targets"]


def _declared_targets(item: Item) -> list[str]:
    """Queue slugs the workflow and the item name for escalation, in order, without repeats."""
    slugs: list[str] = [item.escalate_to]
    metadata = item.metadata if isinstance(item.metadata, dict) else {}
    slugs.append(str(metadata.get("escalate_to") or ""))
    named = metadata.get("escalate_queues")
    if isinstance(named, list | tuple):
        slugs += [str(s) for s in named if isinstance(s, str)]
    try:
        spec = get(item.workflow or item.session.workflow)
        slugs += [spec.escalate_to, *spec.escalate_queues]
    except UnknownWorkflowError:
        pass
    return list(dict.fromkeys(s for s in slugs if s))


def escalation_targets(item: Item) -> list[Queue]:
    """The queues ``item`` may be escalated to (see the module docstring), in order."""
    slugs = _declared_targets(item)
    found = {q.slug: q for q in Queue.objects.filter(slug__in=slugs).exclude(pk=item.queue_id)}
    targets = [found[s] for s in slugs if s in found]
    if not targets:
        triage = triage_queue()
        targets = [] if triage.pk == item.queue_id else [triage]
    return targets
