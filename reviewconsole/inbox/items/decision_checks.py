"""The workflow's checks before a decision (``WorkflowSpec.before_decision``), run by every door.

:func:`check_before_decision` builds the :class:`~reviewconsole.workflows.DecisionAttempt` of an
item and a decision already read (the inbox's ``interrupt_decide``, which bulk approval goes
through; the API's resume; AG-UI's ``resume``), runs the checks and raises
:class:`~reviewconsole.inbox.errors.DecisionRefusedError` (400 ``decision_refused``) with the
workflow's message on the first refusal, before anything is stored. :func:`audit_refusal`
records the refusal (``interrupt.decide_refused``) in a transaction of its own: the doors call it
where the refusal leaves them, after any transaction of theirs rolled back.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest

from ...audit.services import audit_record
from ...workflows import DecisionAttempt, UnknownWorkflowError, get
from ...workflows.checks_before_decision import first_refusal
from ..errors import DecisionRefusedError
from ..models import Item
from .actions import request_kind
from .policy_gate import edited_args_refusal

__all__ = ["CHECK_FAILED", "audit_refusal", "check_before_decision", "reason_needed_for"]

logger = logging.getLogger("reviewconsole.inbox")

CHECK_FAILED = (
    "A check of this workflow could not judge the decision; nothing was recorded. Try again or ask an administrator."
)
"""The refusal when a check raises (its exception is logged, never shown)."""


def _attempt(item: Item, decision: str, reason: str, response: Any, decided_by: str, door: str) -> DecisionAttempt:
    call = item.tool_call if isinstance(item.tool_call, dict) else {}
    args = call.get("args")
    return DecisionAttempt(
        workflow=item.workflow,
        session_id=item.session_id,
        interrupt_id=item.interrupt_id,
        interrupt_kind=str(item.kind),
        request_kind=request_kind(item),
        function_name=item.function_name,
        decision=decision,
        reason=reason.strip(),
        response=response,
        asked=item.payload,
        tool_args=dict(args) if isinstance(args, dict) else {},
        decided_by=decided_by,
        door=door,
    )


def check_before_decision(item: Item, *, decision: str, reason: str, response: Any, decided_by: str, door: str) -> None:
    """Run the item's workflow's ``before_decision`` checks on this decision, after the approval
    policies' check of edited arguments (:func:`.policy_gate.edited_args_refusal`).

    ``response``: the function response that would be stored (JSON); ``door``: ``inbox``,
    ``bulk``, ``api`` or ``agui``. A workflow no longer registered has no checks (the session
    service refuses its answer anyway).

    Raises:
        DecisionRefusedError: a check refused (its message), or raised (:data:`CHECK_FAILED`).
    """
    refused = edited_args_refusal(item, response) if decision == "approve" else None
    if refused is None:
        try:
            checks = get(item.workflow).before_decision
        except UnknownWorkflowError:
            return
        if not checks:
            return
        try:
            refused = first_refusal(checks, _attempt(item, decision, reason, response, decided_by, door))
        except Exception:  # the author's check: whatever it raises refuses the decision, logged
            logger.exception("A before_decision check of %s raised on interrupt %s", item.workflow, item.interrupt_id)
            refused = CHECK_FAILED
        if refused is None:
            return
    raise DecisionRefusedError(
        refused[:2000],
        interrupt_id=item.interrupt_id,
        decision=decision,
        audit={
            "target": item,
            "detail": {"decision": decision, "reason": reason.strip(), "message": refused[:2000], "door": door},
        },
    )


def reason_needed_for(item: Item, decisions: tuple[str, ...] = ("approve", "reject")) -> list[str]:
    """Which of ``decisions`` the workflow's checks refuse on ``item`` without a reason and accept
    with one (the page's "Reason … (required to approve)"): each check is asked both ways, with
    the arguments as the model made them. A check that raises says nothing here (it refuses, and
    says why, when the decision is sent)."""
    try:
        checks = get(item.workflow).before_decision
    except UnknownWorkflowError:
        return []
    needed = []
    for decision in decisions:
        try:
            bare = first_refusal(checks, _attempt(item, decision, "", {}, "", "inbox"))
            given = first_refusal(checks, _attempt(item, decision, "a reason", {}, "", "inbox"))
        except Exception:  # the author's check: judged (and logged) when the decision is sent
            logger.debug("A before_decision check of %s raised while the page asked it", item.workflow, exc_info=True)
            continue
        if bare is not None and given is None:
            needed.append(decision)
    return needed


def audit_refusal(
    exc: DecisionRefusedError,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    actor: str | None = None,
    request: HttpRequest | None = None,
) -> None:
    """Record ``exc`` as a refused decision (``interrupt.decide_refused``: the item, the decision,
    the reason given, the workflow's message, the door)."""
    audit_record(
        action="interrupt.decide_refused",
        user=user,
        actor=actor,
        target=exc.audit["target"],
        request=request,
        detail=exc.audit["detail"],
    )
