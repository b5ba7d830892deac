"""Standing approvals: a reviewer's "approve this tool (with exactly these arguments) from now on"
for a session, a requester or a queue, until an expiry (Microsoft Agent Framework's
``ToolApprovalMiddleware`` keeps the same two kinds: always this tool, this tool with these arguments).

Arguments are compared by digest: sha256 over their canonical JSON (sorted keys, no spaces,
``ensure_ascii``), so ``{"b": 1, "a": 2}`` and ``{"a": 2, "b": 1}`` are the same call and
``{"amount": 100}`` and ``{"amount": 100.5}`` are not. A use is counted with a conditional
``UPDATE`` on a live row (not revoked, not expired), so a revocation or an expiry landing at the
same moment wins or loses cleanly: a revoked approval never decides.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, Q
from django.utils import timezone

from .models import Scope, StandingApproval

__all__ = [
    "MAX_HOURS",
    "StandingError",
    "args_digest",
    "standing_for",
    "standing_grant",
    "standing_revoke",
    "standing_use",
]

MAX_HOURS = 24 * 30
"""Longest a standing approval may last (30 days)."""


class StandingError(ValueError):
    """A standing approval that cannot be granted as asked (the message says why); nothing is stored."""


def args_digest(args: Any) -> str:
    """sha256 hex of the canonical JSON of ``args`` (see the module docstring)."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def standing_grant(
    *,
    workflow: str,
    tool: str,
    args: Any,
    exact: bool,
    scope: str,
    session_id: str,
    requester: str,
    queue: str,
    granted_by: AbstractBaseUser,
    hours: float,
    now: dt.datetime | None = None,
) -> StandingApproval:
    """Store a standing approval of ``tool`` (with exactly ``args`` when ``exact``) for ``scope``
    (``session``: ``session_id``; ``user``: sessions whose ``user_id`` is ``requester``;
    ``queue``: requests in ``queue``), lasting ``hours`` (0 < hours ≤ :data:`MAX_HOURS`).

    Raises:
        StandingError: an unknown scope, an expiry out of range, or a scope with nothing to name.
    """
    if scope not in Scope.values:
        raise StandingError(f"Choose who the standing approval covers: {', '.join(Scope.values)}.")
    if not 0 < hours <= MAX_HOURS:
        raise StandingError(f"A standing approval lasts more than 0 and at most {MAX_HOURS} hours.")
    named = {Scope.SESSION: session_id, Scope.USER: requester, Scope.QUEUE: queue}[Scope(scope)]
    if not named:
        raise StandingError(f"This request has no {scope} to approve for.")
    now = now or timezone.now()
    return StandingApproval.objects.create(
        workflow=workflow,
        tool=tool,
        args=args if exact else None,
        args_digest=args_digest(args) if exact else "",
        scope=scope,
        session_id=session_id if scope == Scope.SESSION else "",
        requester=requester if scope == Scope.USER else "",
        queue=queue if scope == Scope.QUEUE else "",
        granted_by=granted_by,
        granted_at=now,
        expires_at=now + dt.timedelta(hours=hours),
    )


def _live(now: dt.datetime) -> Q:
    return Q(revoked_at__isnull=True, expires_at__gt=now)


def standing_for(
    *, workflow: str, tool: str, args: Any, session_id: str, requester: str, queue: str, now: dt.datetime | None = None
) -> StandingApproval | None:
    """The oldest live standing approval covering this call, or None."""
    now = now or timezone.now()
    covers = Q(scope=Scope.SESSION, session_id=session_id) | Q(scope=Scope.QUEUE, queue=queue)
    if requester:
        covers |= Q(scope=Scope.USER, requester=requester)
    rows = StandingApproval.objects.filter(_live(now), covers, workflow=workflow, tool=tool)
    rows = rows.filter(Q(args_digest="") | Q(args_digest=args_digest(args)))
    return rows.order_by("granted_at", "id").first()


def standing_use(approval: StandingApproval, now: dt.datetime | None = None) -> bool:
    """Count one use of ``approval`` if it is still live (conditional UPDATE); False when it was
    revoked or expired meanwhile (then it must not decide)."""
    now = now or timezone.now()
    used = StandingApproval.objects.filter(_live(now), pk=approval.pk).update(uses=F("uses") + 1, last_used_at=now)
    return used == 1


def standing_revoke(approval: StandingApproval, *, by: AbstractBaseUser, now: dt.datetime | None = None) -> bool:
    """Revoke ``approval`` (conditional on it not being revoked yet); False when it already was."""
    now = now or timezone.now()
    return (
        StandingApproval.objects.filter(pk=approval.pk, revoked_at__isnull=True).update(revoked_at=now, revoked_by=by)
        == 1
    )
