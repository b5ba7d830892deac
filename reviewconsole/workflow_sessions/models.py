"""Sessions, their append-only events, pause checkpoints, stored answers and shared state.

The engine sees these through :class:`reviewconsole.workflow_sessions.store.OrmStore`; the JSON
columns hold the engine's own data (ADK event JSON, checkpoints) unchanged.
"""

from __future__ import annotations

import uuid

from django.db import models

from engine import SessionStatus


def _new_id() -> str:
    return uuid.uuid4().hex


SESSION_STATUS_LABELS: dict[SessionStatus, str] = {
    SessionStatus.NEW: "New",
    SessionStatus.RUNNING: "Running",
    SessionStatus.WAITING: "Waiting for input",
    SessionStatus.COMPLETED: "Completed",
    SessionStatus.FAILED: "Failed",
    SessionStatus.CANCELLED: "Cancelled",
}
"""What people read for each of the engine's :class:`engine.SessionStatus` (the field's choices:
admin filters, ``get_status_display``); the statuses themselves are the engine's."""


class WorkflowSession(models.Model):
    """One run of a registered workflow, from its first message to its end, across pauses."""

    id = models.CharField(primary_key=True, max_length=64, default=_new_id, editable=False)
    workflow = models.CharField(max_length=100, db_index=True, help_text="Registered workflow name.")
    workflow_version = models.CharField(max_length=50, blank=True)
    user_id = models.CharField(max_length=200, help_text="Who started it, e.g. webhook:email-review.")
    title = models.CharField(max_length=200, blank=True, help_text="A short label from the input.")
    status = models.CharField(
        max_length=20,
        choices=[(s.value, SESSION_STATUS_LABELS[s]) for s in SessionStatus],
        default=SessionStatus.NEW.value,
        db_index=True,
    )
    state = models.JSONField(default=dict, blank=True)
    checkpoint = models.JSONField(null=True, blank=True)
    checkpoint_id = models.CharField(max_length=64, blank=True)
    version = models.PositiveIntegerField(default=0, help_text="Bumped by every commit of a run.")
    last_seq = models.PositiveIntegerField(default=0, help_text="Seq of the newest event.")
    invocation_id = models.CharField(max_length=64, blank=True)
    output = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "lease_expires"], name="session_status_lease"),
            # The inbox's "Sessions that failed", newest first (outcome.failed_sessions).
            models.Index(fields=["status", "updated_at"], name="session_status_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.workflow} {self.id[:8]} ({self.status})"


class Event(models.Model):
    """One stored event; ``data`` is its ADK session JSON. Rows are never changed or deleted."""

    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="events")
    seq = models.PositiveIntegerField(help_text="Order within the session, from 1.")
    event_id = models.CharField(max_length=64)
    invocation_id = models.CharField(max_length=64, blank=True)
    author = models.CharField(max_length=200)
    node_path = models.CharField(max_length=500, blank=True)
    branch = models.CharField(max_length=500, blank=True)
    timestamp = models.FloatField(help_text="Seconds since the epoch.")
    data = models.JSONField()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq")]
        indexes = [models.Index(fields=["session", "node_path"], name="event_session_path")]

    def __str__(self) -> str:
        return f"#{self.seq} {self.author} {self.node_path}"


class Checkpoint(models.Model):
    """A resumable point: the engine's checkpoint when a run paused (kept for resume by id)."""

    id = models.CharField(primary_key=True, max_length=64, default=_new_id, editable=False)
    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="checkpoints")
    data = models.JSONField()
    event_seq = models.PositiveIntegerField(help_text="Seq of the last event stored with it.")
    state = models.JSONField(null=True, blank=True, help_text="Session state at the pause (for restore).")
    pending = models.JSONField(default=list, blank=True, help_text="Wire ids of the interrupts pending then.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "created_at"]

    def __str__(self) -> str:
        return f"checkpoint {self.pk} at event {self.event_seq}"


class Delivery(models.Model):
    """An answer stored for a run to apply; ``applied_at`` is set by the commit that used it."""

    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="deliveries")
    interrupt_id = models.CharField(max_length=200, blank=True, help_text="Empty for a user message.")
    value = models.JSONField(null=True)
    final = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "id"]
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["session", "applied_at"], name="delivery_pending")]

    def __str__(self) -> str:
        return f"answer to {self.interrupt_id or 'the session'} ({'applied' if self.applied_at else 'pending'})"


class SharedState(models.Model):
    """``app:`` keys (``user_id`` empty) or ``user:`` keys of one user, for one workflow."""

    workflow = models.CharField(max_length=100)
    user_id = models.CharField(max_length=200, blank=True)
    state = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workflow", "user_id"], name="shared_state_unique")]

    def __str__(self) -> str:
        return f"{self.workflow} state of {self.user_id or 'the app'}"
