"""Shadow mode: a rule flagged ``shadow`` decides nothing; it records what it would have decided
(``PolicyVerdict.shadow_decision``) and, once a person decides, whether they agreed
(``person_decision``, ``agreed``). :func:`agreement` is the admin's figure: agreed / compared.
"""

from __future__ import annotations

from django.db.models import Count, Q

from .models import PolicyVerdict

__all__ = ["agreement", "shadow_compare"]


def shadow_compare(interrupt_pk: int, decision: str) -> None:
    """Record a person's ``decision`` (approve, reject, timeout…) beside the shadow verdict of the
    session interrupt ``interrupt_pk``, if it has one not yet compared (idempotent: a relay run
    again changes nothing)."""
    rows = PolicyVerdict.objects.filter(session_interrupt_id=interrupt_pk, agreed__isnull=True).exclude(
        shadow_decision=""
    )
    for verdict in rows:
        verdict.person_decision = decision[:30]
        verdict.agreed = decision == verdict.shadow_decision
        verdict.save(update_fields=["person_decision", "agreed"])


def agreement(workflow: str, rule: str) -> tuple[int, int]:
    """``(agreed, compared)``: how often people decided as the shadow rule ``rule`` of
    ``workflow`` would have, over the requests both saw."""
    counts = PolicyVerdict.objects.filter(workflow=workflow, shadow_rule=rule, agreed__isnull=False).aggregate(
        compared=Count("id"), agreed=Count("id", filter=Q(agreed=True))
    )
    return counts["agreed"], counts["compared"]
