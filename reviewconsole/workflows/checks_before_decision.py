"""Checks a workflow runs before a decision is accepted (lifecycle hooks, as Camunda's user-task
listeners that veto a transition): ``WorkflowSpec(before_decision=(check, ...))``.

A check is a typed callable ``(DecisionAttempt) -> str | None``: ``None`` lets the decision
through, a string refuses it and is the message the reviewer (or the API / AG-UI client) reads.
Every door that decides (the inbox's item page and bulk approval, ``POST
/api/v1/sessions/<id>/resume``, an AG-UI ``resume`` entry) runs the workflow's checks in order,
after the decision was read and before anything is stored; the first refusal wins and is answered
``400 decision_refused`` (AG-UI: RUN_ERROR ``decision_refused``), audited as
``interrupt.decide_refused``. A check that raises refuses too, with a generic message (its
exception goes to the server log, never to the reviewer).

The declarative form :func:`reason_required_above` covers the common rule, "a decision of these
kinds above a limit needs a reason"::

    WorkflowSpec(..., before_decision=(reason_required_above("amount", 500),))

This module imports nothing of Django: authors' tests may call their checks directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DecisionAttempt", "DecisionCheck", "first_refusal", "reason_required_above"]


@dataclass(frozen=True, kw_only=True)
class DecisionAttempt:
    """A decision about to be stored, as a check sees it (read-only).

    ``workflow``, ``session_id`` and ``interrupt_id`` (the wire id) say what is decided;
    ``interrupt_kind`` is the engine's (``input``, ``confirmation``, ``long_running``) and
    ``request_kind`` the inbox's (e.g. ``refund``); ``function_name`` the asking function or tool
    (``ask_for_approval``); ``decision`` one of ``approve``, ``reject``, ``revise``, ``answer``;
    ``reason`` the reviewer's reason or comment (stripped, may be empty); ``response`` the function
    response the workflow would receive (JSON); ``asked`` the interrupt's payload (JSON) and
    ``tool_args`` the arguments of the tool call it is about (``{}`` when none); ``decided_by`` a
    label (a username, ``client:<name>``, ``agui:<name>``); ``door`` one of ``inbox``, ``bulk``,
    ``api``, ``agui``.
    """

    workflow: str
    session_id: str
    interrupt_id: str
    interrupt_kind: str
    request_kind: str
    function_name: str
    decision: str
    reason: str
    response: Any
    asked: Any
    tool_args: dict[str, Any] = field(default_factory=dict)
    decided_by: str = ""
    door: str = "inbox"

    def value(self, name: str) -> Any:
        """``name`` from the tool call's arguments, else from the asked payload (a dict), else None."""
        if name in self.tool_args:
            return self.tool_args[name]
        return self.asked.get(name) if isinstance(self.asked, dict) else None


DecisionCheck = Callable[[DecisionAttempt], str | None]
"""``check(attempt)``: None to accept, or the refusal message a reviewer reads."""


def reason_required_above(
    name: str,
    limit: float,
    *,
    decisions: Sequence[str] = ("approve",),
    functions: Sequence[str] = (),
    message: str | None = None,
) -> DecisionCheck:
    """A check refusing a decision in ``decisions`` without a reason when the number ``name``
    (:meth:`DecisionAttempt.value`: the tool's argument or the asked payload's field) is above
    ``limit``; with ``functions``, only on requests asked by those functions or tools (e.g.
    ``("ask_for_approval",)``), else on every request of the workflow. ``message`` replaces the
    default sentence ("Approving requires a reason when amount is above 500; …").

    Raises:
        ValueError: ``decisions`` is empty or ``limit`` is not a number.
    """
    if not decisions or isinstance(limit, bool) or not isinstance(limit, int | float):
        raise ValueError("reason_required_above needs a numeric limit and at least one decision.")
    kinds, asked_by = tuple(decisions), frozenset(functions)
    verbs = {"approve": "Approving", "reject": "Rejecting", "revise": "Sending feedback", "answer": "Answering"}

    def check(attempt: DecisionAttempt) -> str | None:
        if attempt.decision not in kinds or attempt.reason.strip():
            return None
        if asked_by and attempt.function_name not in asked_by:
            return None
        value = attempt.value(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= limit:
            return None
        if message is not None:
            return message
        verb = verbs.get(attempt.decision, "This decision")
        return f"{verb} requires a reason when {name} is above {limit:g}; give one. Nothing was recorded."

    check.__name__ = f"reason_required_above_{name}"
    check.__qualname__ = check.__name__
    return check


def first_refusal(checks: Sequence[DecisionCheck], attempt: DecisionAttempt) -> str | None:
    """The message of the first check that refuses ``attempt``, or None when all accept.

    A check's own exceptions propagate (the caller refuses and logs them)."""
    for check in checks:
        refused = check(attempt)
        if refused is not None:
            return str(refused)
    return None
