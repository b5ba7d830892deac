"""Approval policies applied to the inbox's items (``reviewconsole/policies``).

When the outbox reports an approval request opened (a tool confirmation or a long-running
tool's call), the outbox consumer asks :func:`policy_verdict` before it saves the item (a rule
may name the item's queue), then :func:`policy_apply` once it is saved, in the relay's
transaction:

- the verdict is stored (``PolicyVerdict``: the rule, four eyes, the shadow rule's verdict);
- a rule that decides (``decide="approve"`` or ``"reject"``), or else a live standing approval
  covering the call (``policies/standing.py``: the same rule, one approval, arguments no larger
  than the approved call's), decides the item through the same session service as a person's
  decision (``interrupt_answer_sync``), labelled ``policy: <rule>`` (with the rule's reason) or
  ``standing approval #<id> (granted by <user>)`` (with no reason: it gives none on a person's
  behalf; who granted it, when and until when are in the audit entry), audited as
  ``interrupt.decide`` and its run enqueued. The inbox's item is then resolved by the
  ``interrupt.answered`` event like any other, so the item list (filter "decided by policy"),
  the timeline and the audit log show it as a person's.
- Before that, the workflow's checks before a decision (``before_decision``) run on it as on a
  person's (``door`` ``policy`` or ``standing``): a refusal, e.g. the demo refund's reason check
  above $500 on a standing approval, is audited (``interrupt.decide_refused``) and leaves the
  request to people.

It counts once: the consumer runs in the relay row's transaction (a relay run again finds the
item there and does nothing), and the answer is the store's conditional UPDATE (first answer wins).
A later person's or client's decision on such an item is refused and recorded
(``policy_gate.record_refused``, ``interrupt.decide_refused``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from engine import Decision, EngineError

from ...audit.services import audit_record
from ...policies.models import PolicyVerdict, StandingApproval
from ...policies.rules import Verdict, evaluate
from ...policies.standing import standing_for, standing_use
from ...workflow_sessions.models import WorkflowSession
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync
from ..errors import DecisionRefusedError
from ..models import Item, Queue
from .decision_checks import audit_refusal, check_before_decision
from .decisions import resume_payload
from .policy_gate import POLICY_LABEL, STANDING_LABEL, call_of

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["policy_apply", "policy_verdict"]


def policy_verdict(row: Item) -> Verdict | None:
    """What the policies say about the unsaved item ``row`` (None: not an approval request);
    moves it to the governing rule's queue when that queue exists."""
    call = call_of(row)
    if call is None:
        return None
    state = WorkflowSession.objects.filter(pk=row.session_id).values_list("state", flat=True).first()
    verdict = evaluate(row.workflow, call[0], call[1], state or {})
    if verdict.queue:
        queue = Queue.objects.filter(slug=verdict.queue).first()
        if queue is not None:
            row.queue = queue
        else:
            logger.warning("Queue %r of policy %s does not exist; kept %s", verdict.queue, verdict.rule, row.queue)
    return verdict


def policy_apply(row: Item, verdict: Verdict) -> None:
    """Record ``verdict`` for the saved item ``row`` and take its automatic decision, if any (see
    the module docstring). Runs in the relay's transaction."""
    tool, args = call_of(row) or ("", {})
    automatic = _automatic(row, verdict, tool, args)
    if automatic is not None and _refused(row, automatic):
        automatic = None  # the workflow's checks refused it: people decide
    standing = automatic.standing if automatic is not None else None
    if standing is not None and not standing_use(standing):
        automatic = standing = None  # revoked or expired meanwhile
    if not verdict.governed and verdict.shadow is None:
        return
    rule = verdict.rule.name if verdict.rule else ""
    PolicyVerdict.objects.update_or_create(  # a checkpoint restore re-opens the same request
        session_interrupt_id=row.session_interrupt_id,
        defaults={
            "workflow": row.workflow,
            "tool": tool,
            "rule": rule,
            "outcome": "standing" if standing else (automatic.action if automatic else "person"),
            "reason": verdict.reason,
            "approvals_required": verdict.approvals_required,
            "standing": standing,
            "shadow_rule": verdict.shadow.name if verdict.shadow else "",
            "shadow_decision": verdict.shadow_decision,
            "person_decision": "",
            "agreed": None,
        },
    )
    if automatic is not None:
        _decide(row, automatic)


@dataclass(frozen=True, slots=True)
class Automatic:
    """An automatic decision about to be taken: ``action``, the decider's ``label`` and audit
    ``actor``, the ``reason`` recorded (a rule's own; none for a standing approval), the ``door``
    the workflow's checks see (``policy`` or ``standing``), the audit ``detail``, and the
    ``standing`` approval used."""

    action: str
    label: str
    actor: str
    reason: str
    door: str
    detail: dict[str, Any]
    standing: StandingApproval | None = None


def _automatic(row: Item, verdict: Verdict, tool: str, args: dict[str, Any]) -> Automatic | None:
    """The rule's decision, else a live standing approval covering the call, else None."""
    rule = verdict.rule.name if verdict.rule else ""
    if verdict.decide:
        detail = {"policy": rule, "source": verdict.rule.source if verdict.rule else "", "reason": verdict.reason}
        return Automatic(verdict.decide, f"{POLICY_LABEL}{rule}", f"policy:{rule}", verdict.reason, "policy", detail)
    if not rule or verdict.approvals_required != 1:
        return None  # no rule governs it, or four eyes: people decide
    requester = WorkflowSession.objects.filter(pk=row.session_id).values_list("user_id", flat=True).first() or ""
    found = standing_for(
        workflow=row.workflow,
        tool=tool,
        args=args,
        rule=rule,
        session_id=row.session_id,
        requester=requester,
        queue=row.queue.slug,
    )
    if found is None:
        return None
    granted_by = found.granted_by.get_username()
    detail = {
        "standing_approval": found.pk,
        "granted_by": granted_by,
        "granted_at": found.granted_at.isoformat(),
        "expires_at": found.expires_at.isoformat(),
        "scope": found.scope,
        "exact_arguments": bool(found.args_digest),
        "ceiling": found.ceiling,
        "policy": rule,
    }
    label = f"{STANDING_LABEL}{found.pk} (granted by {granted_by})"
    return Automatic("approve", label, f"standing_approval:{found.pk}", "", "standing", detail, found)


def _refused(row: Item, automatic: Automatic) -> bool:
    """Run the workflow's checks before a decision on ``automatic`` as on a person's (the
    standing approval's without a reason); a refusal is audited (``interrupt.decide_refused``,
    by the rule or standing approval) and leaves the item to people."""
    payload = resume_payload(row, automatic.action, reason=automatic.reason)
    try:
        check_before_decision(
            row,
            decision=automatic.action,
            reason=automatic.reason,
            response=payload,
            decided_by=automatic.label,
            door=automatic.door,
        )
    except DecisionRefusedError as exc:
        audit_refusal(exc, actor=automatic.actor)
        return True
    return False


def _decide(row: Item, automatic: Automatic) -> None:
    """Answer ``row`` as ``automatic`` says through the session service, audit it and enqueue the
    run; an answer the engine refuses leaves the item to people (logged), never half-decided."""
    action, reason = automatic.action, automatic.reason
    payload = resume_payload(row, action, reason=reason)
    try:
        with transaction.atomic():  # a savepoint: a refusal undoes this decision only
            interrupt_answer_sync(
                row.session_id,
                {row.interrupt_id: payload},
                decided_by=automatic.label[:200],
                decisions={row.interrupt_id: Decision(kind=action, reason=reason)},
            )
            audit_record(
                action="interrupt.decide",
                actor=automatic.actor,
                target=row,
                after={"decision": action, "response": payload},
                detail={**automatic.detail, "queue": row.queue.slug},
            )
            enqueue_run(row.session_id)
    except EngineError:
        logger.exception(
            "Item %s: the automatic decision %r (%s) was refused; left to a person", row.pk, action, automatic.label
        )
