"""A decision's receipt, whether a decision sent again is the same one (then a no-op), and the
audit entry of a decision refused for the call it names.

The same person (or API client) sending the identical decision again (a double click, a retry
after a lost answer) gets the first decision's receipt back instead of a 409, and nothing is
stored or run again; a *different* decision second is still refused with who decided what and
when (``refusals.py``). Identical means: the same decider, the same decision kind, the same reason
(a rejection's: stored beside the answer, not always in it) and the same answer once normalised as
the engine stores it (``engine.normalize_answer``: feedback, an edited draft, a form's answer, edited
arguments), the argument digest included when the repeat names one (``engine._digest``).

A decision refused because of the call it names (a forged or unknown interrupt id,
``interrupt_unknown``; arguments changed since shown, ``args_changed``; a call already decided by
someone else or a policy, ``interrupt_decided``) is recorded by :func:`refusal_record` as the
audit entry ``interrupt.refuse``, in a transaction of its own: nothing else of it is stored.

Shapes: :func:`receipt` is ``{"interrupt_id": str, "decision": str, "decided_by": str,
"decided_at": ISO 8601 str | None, "args_digest": str | None, "edited_args_digest": str | None}``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest

from engine import AlreadyDecidedError, ArgsChangedError, EngineError, UnknownInterruptError, normalize_answer

from ...audit.services import audit_record
from ...workflow_sessions.models import Interrupt, InterruptStatus, WorkflowSession
from .policy_gate import policy_decided
from .refusals import DONE

__all__ = ["BOUND_REFUSALS", "decided_refusal", "is_repeat", "receipt", "refusal_record"]

BOUND_REFUSALS = (AlreadyDecidedError, ArgsChangedError, UnknownInterruptError)
"""The refusals of a decision for the call it names, which :func:`refusal_record` audits."""

_DIGESTS = ("args_digest", "edited_args_digest")


def receipt(row: Interrupt) -> dict[str, Any]:
    """The receipt of the decision stored on the session interrupt ``row`` (see the module)."""
    response = row.response if isinstance(row.response, dict) else {}
    return {
        "interrupt_id": row.interrupt_id,
        "decision": row.decision,
        "decided_by": row.decided_by_label or None,
        "decided_at": row.decided_at.isoformat() if row.decided_at else None,
        "args_digest": (row.metadata or {}).get("args_digest") or None,
        "edited_args_digest": response.get("edited_args_digest"),
    }


def is_repeat(row: Interrupt | None, *, decided_by: str, decision: str, payload: Any, reason: str = "") -> bool:
    """True when ``row`` was resolved by ``decided_by`` with ``decision``, the reason ``reason``
    (stripped, as stored) and the answer ``payload`` (as a door sends it) is the one stored (see
    the module)."""
    if row is None or row.status != InterruptStatus.RESOLVED or not decided_by:
        return False
    if row.decided_by_label != decided_by or row.decision != decision or (row.reason or "") != reason:
        return False
    try:
        again = normalize_answer(row.kind, payload, row.response_schema)
    except EngineError:
        return False
    stored = row.response
    if isinstance(again, dict) and isinstance(stored, dict):
        named = again.get("args_digest")
        if named is not None and named != stored.get("args_digest", (row.metadata or {}).get("args_digest")):
            return False
        again = {k: v for k, v in again.items() if k not in _DIGESTS}
        stored = {k: v for k, v in stored.items() if k not in _DIGESTS}
    return bool(again == stored)


def decided_refusal(row: Interrupt) -> AlreadyDecidedError | None:
    """The 409 for an answer to ``row`` when it was resolved already, saying by whom, what and when
    (``interrupt_decided``: ``decided_by``, ``decided_at``, ``decision``); None when ``row`` is not
    resolved (cancelled: the engine's own refusal says so)."""
    if row.status != InterruptStatus.RESOLVED:
        return None
    done = DONE.get(row.decision, "decided")
    by = f" by {row.decided_by_label}" if row.decided_by_label else ""
    at = row.decided_at.isoformat() if row.decided_at else None
    return AlreadyDecidedError(
        f"Interrupt {row.interrupt_id} was already {done}{by}"
        + (f" at {at}" if at else "")
        + "; nothing was recorded.",
        interrupt_id=row.interrupt_id,
        decided_by=row.decided_by_label or None,
        decided_at=at,
        decision=row.decision,
    )


def refusal_record(
    exc: BaseException,
    *,
    target: Any = None,
    session_id: str = "",
    interrupt_id: str | None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    actor: str | None = None,
    request: HttpRequest | None = None,
) -> None:
    """Audit ``exc`` as ``interrupt.refuse`` when it is one of :data:`BOUND_REFUSALS` (else nothing):
    ``detail = {"code", "interrupt_id", "message"}`` plus the digests of an ``args_changed``. The
    entry's target is ``target`` (a row), else the session ``session_id``. A call a policy decided
    is left to ``policy_gate.record_refused``, which every door calls for it."""
    if not isinstance(exc, BOUND_REFUSALS):
        return
    session = session_id or getattr(target, "session_id", None) or getattr(target, "pk", "")
    if isinstance(exc, AlreadyDecidedError) and policy_decided(str(session), interrupt_id):
        return  # a policy decided it: policy_gate.record_refused audits the attempt (interrupt.decide_refused)
    detail: dict[str, Any] = {"code": exc.code, "interrupt_id": interrupt_id or "", "message": exc.message}
    if isinstance(exc, ArgsChangedError):
        detail.update(expected=exc.details.get("expected"), given=exc.details.get("given"))
    with transaction.atomic():
        audit_record(
            action="interrupt.refuse",
            user=user,
            actor=actor,
            target=target,
            target_type="" if target is not None else WorkflowSession._meta.label_lower,
            target_id="" if target is not None else session_id,
            request=request,
            detail=detail,
        )
