"""Approval policies applied to the inbox's items (``reviewconsole/policies``).

When the outbox reports an approval request opened (a tool confirmation or a long-running
tool's call), the outbox consumer asks :func:`policy_verdict` before it saves the item (a rule
may name the item's queue), then :func:`policy_apply` once it is saved, in the relay's
transaction:

- the verdict is stored (``PolicyVerdict``: the rule, four eyes, the shadow rule's verdict);
- a rule that decides (``decide="approve"`` or ``"reject"``), or else a live standing approval
  covering the call, decides the item through the same session service as a person's decision
  (``interrupt_answer_sync``), labelled ``policy: <rule>`` or ``standing approval #<id>
  (granted by <user>)`` with its reason, audited as ``interrupt.decide`` and its run enqueued. The
  inbox's item is then resolved by the ``interrupt.answered`` event like any other, so the item
  list (filter "decided by policy"), the timeline and the audit log show it as a person's.

It counts once: the consumer runs in the relay row's transaction (a relay run again finds the
item there and does nothing), and the answer is the store's conditional UPDATE (first answer wins).
A later person's or client's decision on such an item is refused and recorded
(``policy_gate.record_refused``, ``interrupt.decide_refused``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from engine import Decision, EngineError

from ...audit.services import audit_record
from ...policies.models import PolicyVerdict
from ...policies.rules import Verdict, evaluate
from ...policies.standing import standing_for, standing_use
from ...workflow_sessions.models import WorkflowSession
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync
from ..models import Item, Queue
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
    requester = WorkflowSession.objects.filter(pk=row.session_id).values_list("user_id", flat=True).first() or ""
    standing = None
    if not verdict.decide and verdict.approvals_required == 1:
        found = standing_for(
            workflow=row.workflow,
            tool=tool,
            args=args,
            session_id=row.session_id,
            requester=requester,
            queue=row.queue.slug,
        )
        if found is not None and requester == f"user:{found.granted_by.get_username()}":
            found = None  # the requester never approves their own, by a standing approval either
        standing = found if found is not None and standing_use(found) else None
    if not verdict.governed and verdict.shadow is None and standing is None:
        return
    rule = verdict.rule.name if verdict.rule else ""
    PolicyVerdict.objects.update_or_create(  # a checkpoint restore re-opens the same request
        session_interrupt_id=row.session_interrupt_id,
        defaults={
            "workflow": row.workflow,
            "tool": tool,
            "rule": rule,
            "outcome": verdict.decide or ("standing" if standing else "person"),
            "reason": verdict.reason,
            "approvals_required": verdict.approvals_required,
            "standing": standing,
            "shadow_rule": verdict.shadow.name if verdict.shadow else "",
            "shadow_decision": verdict.shadow_decision,
            "person_decision": "",
            "agreed": None,
        },
    )
    if verdict.decide:
        detail = {"policy": rule, "source": verdict.rule.source if verdict.rule else "", "reason": verdict.reason}
        _decide(
            row,
            verdict.decide,
            label=f"{POLICY_LABEL}{rule}",
            actor=f"policy:{rule}",
            reason=verdict.reason,
            detail=detail,
        )
    elif standing is not None:
        granted_by = standing.granted_by.get_username()
        reason = (
            f"Standing approval #{standing.pk} granted by {granted_by} at "
            f"{standing.granted_at:%Y-%m-%d %H:%M} UTC, until {standing.expires_at:%Y-%m-%d %H:%M} UTC."
        )
        detail = {
            "standing_approval": standing.pk,
            "granted_by": granted_by,
            "granted_at": standing.granted_at.isoformat(),
            "expires_at": standing.expires_at.isoformat(),
            "scope": standing.scope,
            "exact_arguments": bool(standing.args_digest),
        }
        label = f"{STANDING_LABEL}{standing.pk} (granted by {granted_by})"
        _decide(row, "approve", label=label, actor=f"standing_approval:{standing.pk}", reason=reason, detail=detail)


def _decide(row: Item, action: str, *, label: str, actor: str, reason: str, detail: dict[str, Any]) -> None:
    """Answer ``row`` as ``label`` through the session service, audit it and enqueue the run; an
    answer the engine refuses leaves the item to people (logged), never half-decided."""
    payload = resume_payload(row, action, reason=reason)
    try:
        with transaction.atomic():  # a savepoint: a refusal undoes this decision only
            interrupt_answer_sync(
                row.session_id,
                {row.interrupt_id: payload},
                decided_by=label[:200],
                decisions={row.interrupt_id: Decision(kind=action, reason=reason)},
            )
            audit_record(
                action="interrupt.decide",
                actor=actor,
                target=row,
                after={"decision": action, "response": payload},
                detail={**detail, "queue": row.queue.slug},
            )
            enqueue_run(row.session_id)
    except EngineError:
        logger.exception("Item %s: the automatic decision %r (%s) was refused; left to a person", row.pk, action, label)
