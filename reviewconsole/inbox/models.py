"""Review queues and interrupts (the items reviewers decide).

An :class:`Interrupt` row is the stored side of an engine interrupt: the engine's store creates it
when a run pauses, a reviewer's decision resolves it (once: a conditional update), and the run
that applies the answer leaves it alone. Queue membership comes from Django groups.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q


class Queue(models.Model):
    """A review queue; its reviewers are the members of ``group``."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    group = models.ForeignKey(Group, on_delete=models.PROTECT, related_name="review_queues")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class InterruptStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RESOLVED = "resolved", "Resolved"
    CANCELLED = "cancelled", "Cancelled"


class Interrupt(models.Model):
    """A request for input, routed to a queue, decided at most once."""

    session = models.ForeignKey(
        "workflow_sessions.WorkflowSession", on_delete=models.PROTECT, related_name="interrupts"
    )
    interrupt_id = models.CharField(max_length=200, help_text="The wire id (function call id).")
    local_id = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=30, help_text="input, confirmation or long_running.")
    function_name = models.CharField(max_length=200, blank=True)
    node_path = models.CharField(max_length=500, blank=True)
    branch = models.CharField(max_length=500, blank=True)
    invocation_id = models.CharField(max_length=64, blank=True)
    message = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    response_schema = models.JSONField(null=True, blank=True)
    tool_call = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="interrupts")
    status = models.CharField(max_length=20, choices=InterruptStatus.choices, default=InterruptStatus.PENDING)
    response = models.JSONField(null=True, blank=True, help_text="The answer the workflow received.")
    decision = models.CharField(max_length=30, blank=True, help_text="approve, reject, revise, answer…")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions"
    )
    decided_by_label = models.CharField(max_length=200, blank=True, help_text="Who decided, for people and systems.")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "interrupt_id"],
                condition=Q(status="pending"),
                name="interrupt_one_pending_per_id",
            )
        ]
        indexes = [models.Index(fields=["queue", "status", "created_at"], name="interrupt_queue_status")]

    def __str__(self) -> str:
        return f"{self.interrupt_id} ({self.status})"
