"""Deciding an interrupt: the reviewer's action becomes a resume payload, stored once, then run.

Free-text interrupts (the email review) resume with ``{"result": "approve" | "reject" | feedback}``;
tool confirmations with ``{"confirmed": true | false}`` (DESIGN.md, resume payloads).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction

from engine import AlreadyDecidedError, InterruptKind

from ..workflow_sessions.runners import runner_for_session
from ..workflow_sessions.services import enqueue_run
from .models import Interrupt, InterruptStatus
from .selectors import queues_for

__all__ = ["ACTIONS", "DecisionError", "interrupt_decide", "resume_payload"]

ACTIONS = ("approve", "reject", "revise")


class DecisionError(ValueError):
    """The decision is incomplete (e.g. feedback without text); nothing was stored."""


def resume_payload(interrupt: Interrupt, action: str, text: str = "") -> dict[str, Any]:
    """The function response for ``action`` on ``interrupt``.

    Raises:
        DecisionError: unknown action, or ``revise`` without feedback.
    """
    if action not in ACTIONS:
        raise DecisionError(f"Unknown action {action!r}.")
    if interrupt.kind == InterruptKind.CONFIRMATION:
        if action == "revise":
            raise DecisionError("A tool call can only be approved or rejected.")
        return {"confirmed": action == "approve"}
    if interrupt.kind == InterruptKind.LONG_RUNNING:
        if action == "revise":
            raise DecisionError("This request can only be approved or rejected.")
        return {"status": "approved" if action == "approve" else "rejected"}
    if action == "revise":
        feedback = text.strip()
        if not feedback:
            raise DecisionError("Write the feedback the next draft should apply.")
        if feedback.lower() in ("approve", "reject"):
            raise DecisionError("Use the Approve or Reject buttons for that.")
        return {"result": feedback}
    return {"result": action}


def interrupt_decide(*, interrupt: Interrupt, user: AbstractBaseUser, action: str, text: str = "") -> Interrupt:
    """Store ``user``'s decision on ``interrupt`` and queue the resume run.

    Raises:
        PermissionDenied: the user is not a reviewer of the interrupt's queue.
        DecisionError: the decision is incomplete.
        engine.AlreadyDecidedError: someone decided first; the message says who, what and when
            (see :func:`_already_decided`) and nothing was stored.
        engine.AnswerInvalidError: the answer fails the interrupt's schema.
    """
    if not queues_for(user).filter(pk=interrupt.queue_id).exists():
        raise PermissionDenied("You are not a reviewer of this queue.")
    payload = resume_payload(interrupt, action, text)
    runner = runner_for_session(interrupt.session)  # the version it paused under (H14)
    try:
        with transaction.atomic():
            async_to_sync(runner.submit)(
                interrupt.session_id,
                {interrupt.interrupt_id: payload},
                decided_by=user.get_username(),
                context={"user_id": user.pk, "decision": action},
            )
            enqueue_run(interrupt.session_id)
    except AlreadyDecidedError:
        # The engine's message depends on where the race was lost (its pending check or the
        # store's conditional update); say it the same way every time, from the stored row.
        raise _already_decided(interrupt) from None
    interrupt.refresh_from_db()
    return interrupt


_DONE = {"approve": "approved", "reject": "rejected", "revise": "answered with feedback"}


def _already_decided(interrupt: Interrupt) -> AlreadyDecidedError:
    """The conflict for a decision that came too late: "… already approved by X at T (UTC)."

    Reloads ``interrupt`` from the database first, so the message names the first decider.
    """
    interrupt.refresh_from_db()
    resolved = interrupt.status == InterruptStatus.RESOLVED
    done = _DONE.get(interrupt.decision, "decided") if resolved else interrupt.status
    by = f" by {interrupt.decided_by_label}" if interrupt.decided_by_label else ""
    at = interrupt.decided_at
    when = f" at {at.astimezone(dt.UTC):%Y-%m-%d %H:%M:%S} UTC" if at else ""
    return AlreadyDecidedError(
        f"This request was already {done}{by}{when}.",
        interrupt_id=interrupt.interrupt_id,
        decided_by=interrupt.decided_by_label or None,
        decided_at=at.isoformat() if at else None,
    )
