"""Approval policies as data: the admin's rules, what a rule said about each request, four
eyes' first approvals and standing approvals.

Rows key on the session's own interrupt (``workflow_sessions.Interrupt``, the engine's
request), never on the inbox's item: this app sits upstream of the inbox (docs/architecture.md,
"Layers"). Conditions are CEL text (``reviewconsole/workflows/conditions.py``), validated when a
rule is saved (``admin.PolicyRuleForm``).
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Decide(models.TextChoices):
    PERSON = "", "A person decides"
    APPROVE = "approve", "Approve automatically"
    REJECT = "reject", "Reject automatically"


class PolicyRule(models.Model):
    """An admin's approval rule for a workflow's tool: with ``replaces_workflow_rule``, it replaces
    the workflow's own rule of the same ``name`` (``WorkflowSpec.policies``; the form refuses a
    name the workflow uses without it, and the replacement is audited as ``policy.rule_replace``);
    with a new name it is tried before the workflow's rules."""

    workflow = models.CharField(max_length=100, help_text="The registered workflow's name.")
    name = models.SlugField(max_length=100, help_text="Unique per workflow.")
    replaces_workflow_rule = models.BooleanField(
        default=False,
        help_text="Replace the rule of this name that the workflow declares in its code (listed above the rules).",
    )
    tool = models.CharField(max_length=200, default="*", help_text="The tool's name, or * for every tool.")
    when = models.TextField(default="true", help_text="CEL over args and state, e.g. args.amount <= 100.")
    decide = models.CharField(max_length=10, choices=Decide.choices, blank=True, default=Decide.PERSON)
    reason = models.TextField(blank=True, help_text="Recorded with an automatic decision, as a person's reason.")
    four_eyes_over = models.TextField(
        blank=True, help_text="CEL: above it two different people must approve, e.g. args.amount > 1000."
    )
    queue = models.SlugField(max_length=100, blank=True, help_text="The queue of the requests it governs.")
    shadow = models.BooleanField(default=False, help_text="Record what it would decide; decide nothing.")
    enabled = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0, help_text="Order among the admin's rules (lowest first).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workflow", "position", "name"]
        constraints = [models.UniqueConstraint(fields=["workflow", "name"], name="policy_rule_unique_name")]

    def __str__(self) -> str:
        return f"{self.workflow}: {self.name}"


class PolicyVerdict(models.Model):
    """What the policies said when an approval request opened (one per session interrupt that a
    rule or a standing approval governed), and, in shadow mode, whether people agreed."""

    session_interrupt = models.OneToOneField(
        "workflow_sessions.Interrupt", on_delete=models.CASCADE, related_name="policy_verdict"
    )
    workflow = models.CharField(max_length=100)
    tool = models.CharField(max_length=200)
    rule = models.CharField(max_length=100, blank=True, help_text="The rule that governs it (empty: none).")
    outcome = models.CharField(max_length=20, help_text="approve, reject (by the rule), standing, or person.")
    reason = models.TextField(blank=True)
    approvals_required = models.PositiveSmallIntegerField(default=1)
    standing = models.ForeignKey(
        "StandingApproval", null=True, blank=True, on_delete=models.PROTECT, related_name="uses_recorded"
    )
    shadow_rule = models.CharField(max_length=100, blank=True)
    shadow_decision = models.CharField(max_length=10, blank=True, help_text="What the shadow rule would have decided.")
    person_decision = models.CharField(max_length=30, blank=True, help_text="What the person then decided.")
    agreed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["workflow", "shadow_rule"], name="policy_verdict_shadow")]

    def __str__(self) -> str:
        return f"{self.workflow} {self.tool}: {self.outcome}"


class FirstApproval(models.Model):
    """The first of the two approvals a four-eyes rule asks for; the second, by someone else, answers."""

    session_interrupt = models.OneToOneField(
        "workflow_sessions.Interrupt", on_delete=models.CASCADE, related_name="first_approval"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True, help_text="The first approver's reason, kept beside the second's.")

    def __str__(self) -> str:
        at = timezone.localtime(self.at)  # the admin's zone, as its columns show times
        return f"first approval by {self.user} at {at:%Y-%m-%d %H:%M} {at.tzname()}"


class Scope(models.TextChoices):
    SESSION = "session", "This session"
    USER = "user", "Sessions the same person started"
    QUEUE = "queue", "Requests in this queue"


class StandingApproval(models.Model):
    """A reviewer's "approve this from now on": ``tool`` of ``workflow`` with exactly ``args``
    (None: other arguments too, each number argument at most the approved call's, ``ceiling``),
    for requests the same ``rule`` governs, within ``scope`` (the session, the sessions the same
    person started, or the queue), until ``expires_at`` or a revocation. Each use decides a
    request and is counted (``policies/standing.py`` says what a use needs)."""

    workflow = models.CharField(max_length=100)
    tool = models.CharField(max_length=200)
    args = models.JSONField(null=True, blank=True, help_text="The exact arguments approved; empty: any.")
    args_digest = models.CharField(max_length=64, blank=True, help_text="sha256 of the canonical arguments.")
    scope = models.CharField(max_length=10, choices=Scope.choices)
    session_id = models.CharField(max_length=64, blank=True)
    requester = models.CharField(
        max_length=200, blank=True, help_text="The person whose sessions it covers: user:<username> (scope user)."
    )
    rule = models.CharField(max_length=100, blank=True, help_text="The approval rule that governed the approved call.")
    ceiling = models.JSONField(
        null=True,
        blank=True,
        help_text="Other arguments: the largest value of each number argument covered (the approved call's).",
    )
    queue = models.SlugField(max_length=100, blank=True)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    granted_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    uses = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-granted_at", "-id"]
        indexes = [models.Index(fields=["workflow", "tool", "expires_at"], name="standing_live")]
        constraints = [
            models.CheckConstraint(condition=~Q(scope="session") | ~Q(session_id=""), name="standing_session_named"),
        ]

    def __str__(self) -> str:
        what = "exact arguments" if self.args_digest else "any arguments"
        return f"{self.workflow} {self.tool} ({what}, {self.get_scope_display()})"

    def is_live(self, now: dt.datetime | None = None) -> bool:
        """Not revoked and not expired."""
        return self.revoked_at is None and self.expires_at > (now or timezone.now())
