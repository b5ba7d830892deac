"""Four eyes in the items' JSON: who approved a request that needs two approvals, in order.

The item page reads ``policy_gate.approvals_of``; every JSON consumer (the API's interrupts and
sessions, the inbox's list and live messages: ``serializers.item_json``) reads
:func:`approvals_json`, two queries for any number of items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine import InterruptKind

from ...policies.models import FirstApproval, PolicyVerdict
from ..models import Item

__all__ = ["approvals_json"]

_APPROVALS = (InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING)


def approvals_json(items: Iterable[Item]) -> dict[int, dict[str, Any] | None]:
    """Four eyes of each of ``items``, by item pk: ``{"required": 2, "rule": name, "approvers":
    [{"by": username, "at": ISO 8601, "reason": str}, …]}`` (the first approver, then the second
    once the item was approved: the page shows both, and so does the JSON); None when one
    approval suffices."""
    rows = list(items)
    found: dict[int, dict[str, Any] | None] = {i.pk: None for i in rows}
    asked = {i.session_interrupt_id: i for i in rows if i.session_interrupt_id is not None and i.kind in _APPROVALS}
    if not asked:
        return found
    verdicts = PolicyVerdict.objects.filter(session_interrupt_id__in=list(asked), approvals_required__gte=2)
    required = {pk: (needed, rule) for pk, needed, rule in verdicts.exclude(rule="").values_list(
        "session_interrupt_id", "approvals_required", "rule"
    )}  # fmt: skip
    if not required:
        return found
    firsts = FirstApproval.objects.filter(session_interrupt_id__in=list(required)).select_related("user")
    first_of = {f.session_interrupt_id: f for f in firsts}
    for pk, (needed, rule) in required.items():
        item, first = asked[pk], first_of.get(pk)
        approvers = []
        if first is not None:
            approvers.append({"by": first.user.get_username(), "at": first.at.isoformat(), "reason": first.reason})
            if item.decision == "approve" and item.decided_at is not None:
                second = {"by": item.decided_by_label, "at": item.decided_at.isoformat(), "reason": item.reason}
                approvers.append(second)
        found[item.pk] = {"required": needed, "rule": rule, "approvers": approvers}
    return found
