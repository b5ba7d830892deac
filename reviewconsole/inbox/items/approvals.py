"""Four eyes: who approved a request that needs two approvals, in order.

The item page reads ``policy_gate.approvals_of``; every JSON consumer (the API's interrupts and
sessions, the inbox's list and live messages: ``serializers.item_json``) reads
:func:`approvals_json`, three queries for any number of items.

Who decided a four-eyes request is both approvers: :func:`deciders` names them when the second
approval is given, and ``decisions.interrupt_decide`` stores :func:`deciders_label` ("ana and
bob") as the decision's ``decided_by`` label, so every place that names the decider (the decided
page, the list's column, the admin, the receipt, the API, the session timeline) names both from
the one stored label. The first approval is its own entry in the session's timeline
(:func:`first_approvals`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from engine import InterruptKind

from ...policies.models import FirstApproval, PolicyVerdict
from ..models import Item

__all__ = ["FirstApprovalShown", "approvals_json", "deciders", "deciders_label", "first_approvals"]

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
    seconds = {asked[pk].decided_by_id for pk in first_of if asked[pk].decided_by_id is not None}
    users = get_user_model().objects.filter(pk__in=seconds) if seconds else []
    username = {u.pk: u.get_username() for u in users}
    for pk, (needed, rule) in required.items():
        item, first = asked[pk], first_of.get(pk)
        approvers = []
        if first is not None:
            approvers.append({"by": first.user.get_username(), "at": first.at.isoformat(), "reason": first.reason})
            if item.decision == "approve" and item.decided_at is not None:
                by = username.get(item.decided_by_id) or item.decided_by_label  # the second alone
                approvers.append({"by": by, "at": item.decided_at.isoformat(), "reason": item.reason})
        found[item.pk] = {"required": needed, "rule": rule, "approvers": approvers}
    return found


def deciders(item: Item, user: AbstractBaseUser, action: str) -> list[str]:
    """The usernames ``user``'s ``action`` on ``item`` decides it in the name of: under four eyes,
    once a first approval is stored, an approval by someone else is the second, and decides it
    with the first approver (``[first, user]``); anything else is ``user``'s alone."""
    name = user.get_username()
    if action != "approve" or item.kind not in _APPROVALS or item.session_interrupt_id is None:
        return [name]
    first = FirstApproval.objects.filter(session_interrupt_id=item.session_interrupt_id).select_related("user").first()
    if first is None or first.user_id == user.pk:
        return [name]
    return [first.user.get_username(), name]


def deciders_label(names: list[str]) -> str:
    """How a decision names its deciders: ``"ana"``, ``"ana and bob"`` (at most 200 characters,
    the stored ``decided_by`` label's length)."""
    return " and ".join(names)[:200]


@dataclass(frozen=True)
class FirstApprovalShown:
    """A first approval as the session's timeline shows it: the request (its ``interrupt_id`` and
    ``node_path``), who, when and why."""

    interrupt_id: str
    node_path: str
    by: str
    at: dt.datetime
    reason: str


def first_approvals(session_id: str) -> list[FirstApprovalShown]:
    """The first approvals given on the session's requests, oldest first (one query)."""
    rows = (
        FirstApproval.objects.filter(session_interrupt__session_id=session_id)
        .select_related("user", "session_interrupt")
        .order_by("at", "pk")
    )
    return [
        FirstApprovalShown(
            interrupt_id=f.session_interrupt.interrupt_id,
            node_path=f.session_interrupt.node_path,
            by=f.user.get_username(),
            at=f.at,
            reason=f.reason,
        )
        for f in rows
    ]
