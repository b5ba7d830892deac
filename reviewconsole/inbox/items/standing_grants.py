"""A reviewer's standing approval, granted with an approval on a policy-governed item.

The decision form may carry ``standing`` (``exact``: this tool with these exact arguments;
``tool``: this tool, other arguments no larger than these), ``standing_scope`` (``session``,
``user``: the sessions the same person started, offered only when a person started this one,
``queue``) and ``standing_hours`` (how long it lasts, at most 30 days). It is granted in the
approval's transaction (``interrupt_decide(standing=...)``), bound to the rule that governs the
request, audited as ``policy.standing_grant``; later requests it covers are approved by it
(``policy_decisions.policy_apply``; what it covers: ``policies/standing.py``). Admins list and
revoke them (``policies/admin.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, QueryDict

from ...audit.services import audit_record
from ...policies.models import PolicyVerdict, Scope
from ...policies.standing import MAX_HOURS, PERSON_PREFIX, StandingError, standing_grant
from ..errors import DecisionError
from ..models import Item
from .policy_gate import call_of

__all__ = ["StandingRequest", "person_started", "standing_from_post"]


def person_started(item: Item) -> bool:
    """Whether a person started the item's session in the console (``user:<username>``), so a
    standing approval may cover the sessions they start (``policies/standing.py``)."""
    return str(item.session.user_id).startswith(PERSON_PREFIX)


@dataclass(frozen=True, slots=True)
class StandingRequest:
    """What the reviewer asked to stand: ``exact`` arguments or the whole tool, ``scope``, ``hours``."""

    exact: bool
    scope: str
    hours: float

    def check(self, item: Item, action: str) -> None:
        """Refuse before anything is stored.

        Raises:
            DecisionError: not an approval, not a policy-governed approval request, under four
                eyes (a standing approval would skip the second person), or an unknown scope.
        """
        if action != "approve":
            raise DecisionError("Only an approval can stand for later requests; nothing was recorded.")
        verdict = PolicyVerdict.objects.filter(session_interrupt_id=item.session_interrupt_id).first()
        if call_of(item) is None or verdict is None or not verdict.rule:
            raise DecisionError("Standing approvals are for requests an approval policy governs; nothing was recorded.")
        if verdict.approvals_required > 1:
            raise DecisionError(
                "This request needs two approvals: it cannot stand for later ones. Nothing was recorded."
            )
        if self.scope not in Scope.values:
            raise DecisionError(f"Choose who the standing approval covers: {', '.join(Scope.values)}.")
        if self.scope == Scope.USER and not person_started(item):
            raise DecisionError(
                f"This session was started by {item.session.user_id}, a sender rather than a person: a standing "
                "approval for its requester would cover everyone it sends for. Choose this session or this queue; "
                "nothing was recorded."
            )

    def grant(self, item: Item, user: AbstractBaseUser, request: HttpRequest | None) -> None:
        """Store and audit it (inside the approval's transaction).

        Raises:
            DecisionError: ``policies.standing.StandingError`` (e.g. an expiry out of range).
        """
        tool, args = call_of(item) or ("", {})
        verdict = PolicyVerdict.objects.filter(session_interrupt_id=item.session_interrupt_id).first()
        try:
            approval = standing_grant(
                workflow=item.workflow,
                tool=tool,
                args=args,
                exact=self.exact,
                scope=self.scope,
                session_id=item.session_id,
                requester=item.session.user_id,
                queue=item.queue.slug,
                granted_by=user,
                hours=self.hours,
                rule=verdict.rule if verdict is not None else "",
            )
        except StandingError as exc:
            raise DecisionError(str(exc)) from None
        audit_record(
            action="policy.standing_grant",
            user=user,
            target=approval,
            request=request,
            after={
                "tool": tool,
                "args": approval.args,
                "ceiling": approval.ceiling,
                "rule": approval.rule,
                "scope": approval.scope,
                "expires_at": approval.expires_at.isoformat(),
            },
            detail={"item": item.pk, "workflow": item.workflow},
        )


def standing_from_post(post: QueryDict) -> StandingRequest | None:
    """The standing approval a decision form asks for, or None (``standing`` empty).

    Raises:
        DecisionError: an unknown kind or a number of hours that is not one (or out of range).
    """
    kind = post.get("standing", "")
    if not kind:
        return None
    if kind not in ("exact", "tool"):
        raise DecisionError("A standing approval is for these exact arguments (exact) or the tool (tool).")
    try:
        hours = float(post.get("standing_hours", "24"))
    except ValueError:
        raise DecisionError("Give the standing approval's length in hours.") from None
    if not 0 < hours <= MAX_HOURS:
        raise DecisionError(f"A standing approval lasts more than 0 and at most {MAX_HOURS} hours.")
    return StandingRequest(exact=kind == "exact", scope=post.get("standing_scope", "session"), hours=hours)
