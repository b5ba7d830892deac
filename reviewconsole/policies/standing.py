"""Standing approvals: a reviewer's "approve this tool (with exactly these arguments) from now on"
for a session, a requester or a queue, until an expiry (Microsoft Agent Framework's
``ToolApprovalMiddleware`` keeps the same two kinds: always this tool, this tool with these arguments).

Arguments are compared by digest: sha256 over their canonical JSON (sorted keys, no spaces,
``ensure_ascii``), so ``{"b": 1, "a": 2}`` and ``{"a": 2, "b": 1}`` are the same call and
``{"amount": 100}`` and ``{"amount": 100.5}`` are not. A use is counted with a conditional
``UPDATE`` on a live row (not revoked, not expired), so a revocation or an expiry landing at the
same moment wins or loses cleanly: a revoked approval never decides.

What one may cover (a person's approval stands for later ones; it must not stand for more than
that person approved, nor skip what the workflow asks of a person):

- **The same rule**: only requests the approval rule that governed the approved call governs
  (``rule``); never a request under four eyes, nor one no rule governs.
- **Other arguments, no larger**: "this tool, other arguments" covers calls whose every number
  argument is at most the approved call's (``ceiling``: a $250 refund's standing approval covers
  $40 to $250, never $999).
- **The workflow's checks**: each use goes through the workflow's ``before_decision`` checks
  like a person's decision (``door="standing"``), with no reason: a standing approval never gives
  a reason on a person's behalf, so a request whose check asks for one (the demo refund above
  $500) waits for a person (``inbox/items/policy_decisions.py``).
- **A person's sessions**: the ``user`` scope covers the sessions one person started in the
  console (``WorkflowSession.user_id`` ``user:<username>``). A session started by a webhook, an
  API client or an AG-UI client names its sender (``webhook:<slug>``, ``client:<name>``,
  ``agui:<name>``), which sends for everyone: a ``user`` grant there would cover every caller, so
  it is refused (:class:`StandingError`); choose the session or the queue.
- Never its grantor's own requests (the requester never approves their own).
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
    "PERSON_PREFIX",
    "StandingError",
    "args_digest",
    "standing_for",
    "standing_grant",
    "standing_revoke",
    "standing_use",
]

MAX_HOURS = 24 * 30
"""Longest a standing approval may last (30 days)."""

PERSON_PREFIX = "user:"
"""How a session started by a person in the console names them (``WorkflowSession.user_id``)."""


class StandingError(ValueError):
    """A standing approval that cannot be granted as asked (the message says why); nothing is stored."""


def args_digest(args: Any) -> str:
    """sha256 hex of the canonical JSON of ``args`` (see the module docstring)."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def ceiling_of(args: Any) -> dict[str, float]:
    """The number arguments of ``args`` (top level): the most "other arguments" may ask."""
    return {k: v for k, v in args.items() if _number(v)} if isinstance(args, dict) else {}


def within(ceiling: dict[str, Any] | None, args: Any) -> bool:
    """Whether every number argument of the approved call bounds ``args``'s (present, a number, not larger)."""
    given = args if isinstance(args, dict) else {}
    return all(_number(given.get(k)) and given[k] <= v for k, v in (ceiling or {}).items())


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
    rule: str = "",
    now: dt.datetime | None = None,
) -> StandingApproval:
    """Store a standing approval of ``tool`` (with exactly ``args`` when ``exact``, else other
    arguments no larger) for requests ``rule`` governs, for ``scope`` (``session``:
    ``session_id``; ``user``: the sessions the person ``requester`` (``user:<username>``) started;
    ``queue``: requests in ``queue``), lasting ``hours`` (0 < hours ≤ :data:`MAX_HOURS`).

    Raises:
        StandingError: an unknown scope, an expiry out of range, a scope with nothing to name, or
            ``user`` for a session no person started (see the module docstring).
    """
    if scope not in Scope.values:
        raise StandingError(f"Choose who the standing approval covers: {', '.join(Scope.values)}.")
    if not 0 < hours <= MAX_HOURS:
        raise StandingError(f"A standing approval lasts more than 0 and at most {MAX_HOURS} hours.")
    named = {Scope.SESSION: session_id, Scope.USER: requester, Scope.QUEUE: queue}[Scope(scope)]
    if not named:
        raise StandingError(f"This request has no {scope} to approve for.")
    if scope == Scope.USER and not requester.startswith(PERSON_PREFIX):
        raise StandingError(
            f"This session was started by {requester}, a sender rather than a person: a standing approval for "
            "its requester would cover everyone it sends for. Choose this session or this queue; nothing was "
            "recorded."
        )
    now = now or timezone.now()
    return StandingApproval.objects.create(
        workflow=workflow,
        tool=tool,
        args=args if exact else None,
        args_digest=args_digest(args) if exact else "",
        ceiling=None if exact else ceiling_of(args),
        rule=rule,
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
    *,
    workflow: str,
    tool: str,
    args: Any,
    rule: str,
    session_id: str,
    requester: str,
    queue: str,
    now: dt.datetime | None = None,
) -> StandingApproval | None:
    """The oldest live standing approval covering this call of ``tool`` governed by ``rule``, or
    None (see the module docstring: the same rule, the arguments, the scope; never the grantor's own)."""
    now = now or timezone.now()
    covers = Q(scope=Scope.SESSION, session_id=session_id) | Q(scope=Scope.QUEUE, queue=queue)
    if requester.startswith(PERSON_PREFIX):
        covers |= Q(scope=Scope.USER, requester=requester)
    rows = StandingApproval.objects.filter(_live(now), covers, workflow=workflow, tool=tool, rule=rule)
    rows = rows.filter(Q(args_digest="") | Q(args_digest=args_digest(args))).select_related("granted_by")
    for row in rows.order_by("granted_at", "id")[:50]:
        if requester == f"{PERSON_PREFIX}{row.granted_by.get_username()}":
            continue  # the requester never approves their own, by a standing approval either
        if row.args_digest or within(row.ceiling, args):
            return row
    return None


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
