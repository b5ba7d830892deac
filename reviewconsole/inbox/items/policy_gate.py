"""Who may approve a policy-governed item, and the record of refused decisions.

- **The requester never approves their own**: the person who started the session
  (``WorkflowSession.user_id`` ``user:<username>``: a console user, from ``/new/``) may not
  approve any of its requests, whether a rule governs them or not (403; rejecting stays open to
  them). It holds in every door a person decides through: the item's page and bulk approval both
  come here (``decisions.interrupt_decide``); an API or AG-UI client decides as itself
  (``client:<name>``, ``agui:<name>``), never as a person, and a standing approval is never used
  on its grantor's own requests (``policies/standing.py``).
- **Four eyes**: when the governing rule's ``four_eyes_over`` held, an approval is the first of
  two: it is stored (``policies.FirstApproval``, one per request: the database's unique
  constraint settles two first approvals at the same moment, the later one becoming the second),
  audited as ``interrupt.approve_first``, pushed live to the item's queue
  (``interrupt.approved_first``: its status sentence names the first approver) and resumes
  nothing; the second, by a different user, decides as usual. The same person approving twice
  gets 409 ``four_eyes``. An API client cannot give either approval (409
  ``four_eyes_required``): two people decide in the inbox.
- :func:`record_refused` audits a decision refused because a policy or a standing approval had
  decided the request (``interrupt.decide_refused``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest

from engine import InterruptKind

from ...audit.services import audit_record
from ...policies.models import FirstApproval, PolicyVerdict
from ...policies.rules import evaluate
from ...preferences.times import absolute
from ...workflow_sessions.models import Interrupt as SessionInterrupt
from ..errors import InboxConflict
from ..models import POLICY_LABEL, STANDING_LABEL, Item
from .recording import item_change_record

__all__ = [
    "APPROVAL_KINDS",
    "POLICY_LABEL",
    "STANDING_LABEL",
    "FourEyesError",
    "approval_gate",
    "approvals_of",
    "by_policy",
    "call_of",
    "client_gate",
    "edited_args_refusal",
    "policy_decided",
    "record_refused",
    "standing_offered",
]


class FourEyesError(InboxConflict):
    """A four-eyes item's approval refused: the same person again (409 ``four_eyes``)."""

    code = "four_eyes"


def by_policy() -> Q:
    """Items decided by a rule or a standing approval (the list's "decided by policy" filter)."""
    return Q(decided_by_label__startswith=POLICY_LABEL) | Q(decided_by_label__startswith=STANDING_LABEL)


APPROVAL_KINDS = (InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING)
"""The requests the approval policies judge: only they have a verdict."""


def call_of(row: Item) -> tuple[str, dict[str, Any]] | None:
    """``(tool, args)`` of an approval request (the call a confirmation gates, or the long-running
    call itself), or None for other requests."""
    if row.kind not in APPROVAL_KINDS:
        return None
    call = row.tool_call or {}
    args = call.get("args")
    return str(call.get("name") or row.function_name), args if isinstance(args, dict) else {}


def _verdict(item: Item) -> PolicyVerdict | None:
    """The governing rule's verdict on ``item``. Only approval requests have one
    (``policy_decisions.policy_verdict``): no query for the others."""
    if item.session_interrupt_id is None or call_of(item) is None:
        return None
    return PolicyVerdict.objects.filter(session_interrupt_id=item.session_interrupt_id).exclude(rule="").first()


def approvals_of(item: Item) -> dict[str, object] | None:
    """What the item's page and JSON show of four eyes: ``{"required": 2, "given": 0|1|2,
    "first_by": username or None, "first_at": datetime or None, "first_reason": str,
    "second_by": username or None, "rule": name}`` (``given`` 2 and ``second_by`` set once the
    second approval decided it); None when one approval suffices."""
    verdict = _verdict(item)
    if verdict is None or verdict.approvals_required < 2:
        return None
    first = FirstApproval.objects.filter(session_interrupt_id=item.session_interrupt_id).select_related("user").first()
    second = item.decided_by if first and item.decision == "approve" and item.decided_by_id else None
    return {
        "required": verdict.approvals_required,
        "given": (2 if item.decision == "approve" else 1) if first else 0,
        "second_by": second.get_username() if second else None,
        "first_by": first.user.get_username() if first else None,
        "first_at": first.at if first else None,
        "first_reason": first.reason if first else "",
        "rule": verdict.rule,
    }


def standing_offered(item: Item) -> bool:
    """Whether the item's page offers a standing approval: a policy governs it, one approval suffices."""
    verdict = _verdict(item)
    return verdict is not None and verdict.approvals_required == 1 and call_of(item) is not None


def approval_gate(
    *, item: Item, user: AbstractBaseUser, action: str, reason: str = "", request: HttpRequest | None = None
) -> bool:
    """Check a person's ``action`` on ``item`` against its policy; True when it was recorded as the
    first of two approvals (the caller stores no answer), False when the decision goes on.

    Raises:
        PermissionDenied: the user started the item's session and approves (any of its requests).
        FourEyesError: the user already gave the first approval.
    """
    if action != "approve":
        return False
    if item.session.user_id == f"user:{user.get_username()}":
        raise PermissionDenied("You asked for this request: someone else must approve it. Nothing was recorded.")
    verdict = _verdict(item)
    if verdict is None or verdict.approvals_required < 2:
        return False
    first = FirstApproval.objects.filter(session_interrupt_id=item.session_interrupt_id).first()
    if first is None:
        try:
            with transaction.atomic():
                FirstApproval.objects.create(session_interrupt_id=item.session_interrupt_id, user=user, reason=reason)
                item_change_record(  # audited, and open inboxes and pages hear of it
                    action="interrupt.approve_first",
                    interrupt=item,
                    changes=[(item.queue_id, "interrupt.approved_first")],
                    user=user,
                    request=request,
                    detail={"policy": verdict.rule, "approvals_required": verdict.approvals_required, "reason": reason},
                )
            return True
        except IntegrityError:  # someone else's first approval landed first: this one is the second
            first = FirstApproval.objects.get(session_interrupt_id=item.session_interrupt_id)
    if first.user_id == user.pk:
        raise FourEyesError(
            f"You gave the first approval at {absolute(first.at)}; a second, different person "
            "must approve it. Nothing was recorded.",
            first_approval_by=user.get_username(),
        )
    return False


def client_gate(*, item: Item, decision: str) -> str | None:
    """Why an API or AG-UI client's ``decision`` on ``item`` is refused, or None: ``"four_eyes"``
    (409: two people must approve it in the inbox). A client that started the session may give
    its one approval: it is the outside system whose late result a long-running tool waits for
    (the README's refund through the API), not a person approving their own request."""
    if decision != "approve":
        return None
    verdict = _verdict(item)
    if verdict is None:
        return None
    return "four_eyes" if verdict.approvals_required >= 2 else None


def record_refused(
    session_id: str,
    interrupt_id: str | None,
    *,
    decision: str = "",
    answer: Any = None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    actor: str | None = None,
    request: HttpRequest | None = None,
) -> bool:
    """Audit ``interrupt.decide_refused`` when a person or client tried to decide (``decision``,
    or the raw ``answer`` a client sent) the session's interrupt ``interrupt_id`` after a policy or
    a standing approval decided it; True when it was one. Read from the session's interrupt (the
    item may lag it by the relay); written in a transaction of its own (the refused decision's
    rolled back)."""
    asked = _policy_decided(session_id, interrupt_id)
    if asked is None:
        return False
    item = Item.objects.filter(session_interrupt_id=asked[0]).first()
    with transaction.atomic():
        audit_record(
            action="interrupt.decide_refused",
            user=user,
            actor=actor,
            target=item,
            target_type="" if item is not None else "workflow_sessions.interrupt",
            target_id="" if item is not None else str(asked[0]),
            request=request,
            after={"decision": decision, **({"answer": answer} if answer is not None else {})},
            detail={"decided_by": asked[1], "decision": asked[2], "why": "decided by policy"},
        )
    return True


def policy_decided(session_id: str, interrupt_id: str | None) -> bool:
    """Whether a policy or a standing approval decided the session's interrupt ``interrupt_id``
    (then :func:`record_refused` audits a later attempt, and ``receipts.refusal_record`` need not)."""
    return _policy_decided(session_id, interrupt_id) is not None


def _policy_decided(session_id: str, interrupt_id: str | None) -> tuple[int, str, str] | None:
    """``(pk, decided_by_label, decision)`` of the session interrupt a policy decided, else None."""
    if not interrupt_id:
        return None
    asked = (
        SessionInterrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
        .order_by("-id")
        .values_list("pk", "decided_by_label", "decision")
        .first()
    )
    if asked is None or not (asked[1] or "").startswith((POLICY_LABEL, STANDING_LABEL)):
        return None
    return asked


def edited_args_refusal(item: Item, response: Any) -> str | None:
    """Why an approval with edited arguments (``response["args"]``, any door) is refused, or None.

    The approval policies were asked about the call as the model made it; edited arguments must
    not change their answer (a $20 refund edited to $50,000 would skip four eyes), so they are
    refused when the rules' verdict on them differs (another governing rule or automatic
    decision, or four eyes), and under four eyes always (the first approver saw other arguments).
    """
    edited = response.get("args") if isinstance(response, dict) else None
    call = call_of(item)
    if not isinstance(edited, dict) or call is None or edited == call[1]:
        return None
    tool, args = call
    state = item.session.state
    asked, now = evaluate(item.workflow, tool, args, state), evaluate(item.workflow, tool, edited, state)
    if max(asked.approvals_required, now.approvals_required) >= 2:
        return (
            "Under four eyes the arguments cannot be edited: approve the call as shown or reject it. "
            "Nothing was recorded."
        )
    before = (asked.rule.name if asked.rule else None, asked.decide)
    after = (now.rule.name if now.rule else None, now.decide)
    if before != after:
        named = after[0] or "none"
        return (
            f"The edited arguments fall under another approval rule ({named}): approve the call as shown "
            "or reject it. Nothing was recorded."
        )
    return None
