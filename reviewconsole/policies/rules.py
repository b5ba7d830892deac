"""The rules that apply to one tool of one workflow, and what they say about one call.

Rules come from two places: the workflow's own (``WorkflowSpec.policies``, see
:class:`reviewconsole.workflows.ApprovalPolicy`) and the admin's (:class:`~.models.PolicyRule`,
enabled rows). An admin's rule that says it replaces the workflow's rule of its name
(``replaces_workflow_rule``, a visible choice, audited when saved) takes its place; one that does
not say so while the workflow uses its name (a row written around the admin's form) replaces
nothing and is left out, logged: the workflow's rule stands. An admin's rule with a new name
(or replacing a rule the workflow no longer declares) is tried before the workflow's rules (so
an admin can tighten a workflow without a deploy), in ``position`` order. Shadow rules never
govern: they only say what they would have decided. :func:`workflow_rules` lists the workflow's
own rules (the admin shows them, read-only, and what replaced each).

:func:`evaluate` is pure reading: the first non-shadow rule whose ``when`` holds governs the
request (its automatic decision, its queue, four eyes when its ``four_eyes_over`` holds); the
first shadow rule whose ``when`` holds and that decides gives the shadow verdict.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..workflows import UnknownWorkflowError, get
from ..workflows.conditions import condition_holds
from .models import PolicyRule

__all__ = ["Rule", "Verdict", "evaluate", "rules_for", "workflow_rules"]

logger = logging.getLogger("reviewconsole.policies")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule as it applies (``source``: ``"workflow"`` or ``"admin"``); fields as ``ApprovalPolicy``."""

    name: str
    tool: str
    when: str
    decide: str
    reason: str
    four_eyes_over: str
    queue: str
    shadow: bool
    source: str

    def covers(self, tool: str) -> bool:
        return self.tool in ("*", tool)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the rules say about one call. ``rule``: the governing rule (None: no rule applies and
    a person decides as before); ``decide``: ``"approve"``, ``"reject"`` or ``""`` (a person);
    ``approvals_required``: 2 under four eyes, else 1; ``queue``: a queue slug or ``""``;
    ``shadow``: the shadow rule that would have decided, and ``shadow_decision`` what."""

    rule: Rule | None = None
    decide: str = ""
    reason: str = ""
    approvals_required: int = 1
    queue: str = ""
    shadow: Rule | None = None
    shadow_decision: str = ""

    @property
    def governed(self) -> bool:
        return self.rule is not None


def workflow_rules(workflow: str) -> list[Rule]:
    """The rules ``workflow`` declares in its code, in order (none for an unregistered workflow)."""
    try:
        policies = get(workflow).policies
    except UnknownWorkflowError:
        return []
    return [
        Rule(p.name, p.tool, p.when, p.decide or "", p.reason, p.four_eyes_over or "", p.queue, p.shadow, "workflow")
        for p in policies
    ]


def rules_for(workflow: str, tool: str) -> list[Rule]:
    """The rules of ``workflow`` covering ``tool``, in the order they are tried (see the module docstring)."""
    spec = workflow_rules(workflow)
    names = {r.name for r in spec}
    admin: list[Rule] = []
    replacing: dict[str, Rule] = {}
    for row in PolicyRule.objects.filter(workflow=workflow, enabled=True).order_by("position", "name"):
        rule = Rule(
            row.name, row.tool, row.when, row.decide, row.reason, row.four_eyes_over, row.queue, row.shadow, "admin"
        )
        if row.name not in names:
            admin.append(rule)
        elif row.replaces_workflow_rule:
            replacing[row.name] = rule
        else:
            logger.warning(
                "Admin rule %s of %s shares a workflow rule's name without replacing it; left out", row.name, workflow
            )
    ordered = admin + [replacing.get(r.name, r) for r in spec]
    return [r for r in ordered if r.covers(tool)]


def evaluate(workflow: str, tool: str, args: Any, state: Any) -> Verdict:
    """What the rules of ``workflow`` say about a call of ``tool`` with ``args`` in a session whose
    state is ``state``. A condition that cannot be evaluated for this call does not decide
    automatically and does ask for four eyes (``conditions.condition_holds``'s ``default``)."""
    governing: Rule | None = None
    shadow: Rule | None = None
    for rule in rules_for(workflow, tool):
        if rule.shadow:
            if shadow is None and rule.decide and condition_holds(rule.when, args=args, state=state, default=False):
                shadow = rule
            continue
        if governing is None and condition_holds(rule.when, args=args, state=state, default=False):
            governing = rule
    if governing is None:
        return Verdict(shadow=shadow, shadow_decision=shadow.decide if shadow else "")
    four_eyes = bool(governing.four_eyes_over) and condition_holds(
        governing.four_eyes_over, args=args, state=state, default=True
    )
    return Verdict(
        rule=governing,
        decide=governing.decide,
        reason=governing.reason,
        approvals_required=2 if four_eyes else 1,
        queue=governing.queue,
        shadow=shadow,
        shadow_decision=shadow.decide if shadow else "",
    )
