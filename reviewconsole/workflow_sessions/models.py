"""Sessions, their append-only events, pause checkpoints, interrupts, stored answers, shared
state and the outbox of domain events.

The engine sees these through :class:`reviewconsole.workflow_sessions.store.OrmStore`; the JSON
columns hold the engine's own data (ADK event JSON, checkpoints) unchanged, but for an event's
fields its row holds in columns (``event_rows.py``).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from engine import SessionStatus

from .event_rows import event_json


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
    correlation_key = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="The thread or correlation key its input came with (webhook thread key, API correlation_key).",
    )
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "lease_expires"], name="session_status_lease"),
            # The inbox's "Sessions that failed", newest first (inbox/failed.failed_sessions).
            models.Index(fields=["status", "updated_at"], name="session_status_updated"),
            # The open session of a correlation key (workflow_sessions/arrivals.py).
            models.Index(fields=["workflow", "correlation_key", "status"], name="session_correlation"),
        ]

    def __str__(self) -> str:
        return f"{self.workflow} {self.id[:8]} ({self.status})"


class Event(models.Model):
    """One stored event; rows are never changed or deleted.

    ``data`` is its ADK session JSON without the fields the columns hold (``event_rows.py``);
    :meth:`adk_json` is the whole JSON.
    """

    # No index of its own: the (session, seq) and (session, node_path) indexes serve every lookup by session.
    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="events", db_index=False)
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

    def adk_json(self) -> dict[str, Any]:
        """The event's ADK session JSON (``data`` with the columns put back)."""
        return event_json(
            self.event_id, self.invocation_id, self.author, self.branch, self.timestamp, self.node_path, self.data
        )


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


class Answer(models.Model):
    """An answer stored for a run to apply (the engine's :class:`engine.StoredAnswer`, its ``id``
    this row's); ``applied_at`` is set by the commit that used it."""

    # No index of its own: the (session, applied_at) index serves every lookup by session.
    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="answers", db_index=False)
    interrupt_id = models.CharField(max_length=200, blank=True, help_text="Empty for a user message.")
    value = models.JSONField(null=True)
    final = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "id"]
        indexes = [models.Index(fields=["session", "applied_at"], name="answer_pending")]

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


class InterruptStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RESOLVED = "resolved", "Resolved"
    CANCELLED = "cancelled", "Cancelled"


SESSION_FAILED = "session_failed"
"""The ``decision`` of an interrupt its session's failure cancelled (a Retry asks it again as a new
row with the same ``interrupt_id``)."""


class InterruptQuerySet(models.QuerySet["Interrupt"]):
    def newest(self, session_id: str, interrupt_id: str) -> Interrupt | None:
        """The session's latest row for the wire id ``interrupt_id`` (a rewind or a Retry asks an
        interrupt again as a new row with the same id), or None."""
        return self.filter(session_id=session_id, interrupt_id=interrupt_id).order_by("-id").first()


class Interrupt(models.Model):
    """The engine's interrupt as the session keeps it: what was asked, and its answer (once).

    Only the ORM store writes these (opened by a commit, resolved by an answer's conditional
    UPDATE, cancelled by a commit or a restore). The reviewer's item (queue, claim, due time) is
    the inbox's own row, built from the outbox's ``interrupt.opened`` event.
    """

    # No index of its own: the (session, status) index serves every lookup by session.
    session = models.ForeignKey(
        WorkflowSession, on_delete=models.PROTECT, related_name="session_interrupts", db_index=False
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
    status = models.CharField(max_length=20, choices=InterruptStatus.choices, default=InterruptStatus.PENDING)
    response = models.JSONField(null=True, blank=True, help_text="The answer the workflow received.")
    decision = models.CharField(max_length=30, blank=True, help_text="approve, reject, revise, answer, timeout…")
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_by_label = models.CharField(max_length=200, blank=True, help_text="Who decided, for people and systems.")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = InterruptQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "interrupt_id"],
                condition=Q(status="pending"),
                name="session_interrupt_one_pending",
            )
        ]
        indexes = [models.Index(fields=["session", "status"], name="session_interrupt_pending")]

    def __str__(self) -> str:
        return f"{self.interrupt_id} ({self.status})"


class OutboxEvent(models.Model):
    """A domain event (``domain_events.py``) written in the store's own transaction, published by
    the relay (``outbox.py``) to every registered consumer, at least once, in id order per session.

    ``published_at`` set: done (or, with ``failed_at``, given up after ``attempts`` tries).
    """

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=40, help_text="interrupt.opened, interrupt.answered, …")
    session_id = models.CharField(max_length=64, db_index=True)
    data = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)
    published_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Failed tries so far.")
    last_error = models.CharField(max_length=200, blank=True, help_text="The last failure's exception class.")
    failed_at = models.DateTimeField(null=True, blank=True, help_text="Given up (kept for the admin).")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["published_at", "id"], name="outbox_unpublished")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} ({'failed' if self.failed_at else 'published' if self.published_at else 'new'})"


class ArrivalStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    STARTED = "started", "Started"
    REFUSED = "refused", "Refused"


class ArrivalTarget(models.TextChoices):
    NEW_SESSION = "new_session", "A new session of the key"
    MESSAGE = "message", "The next message of the session"


class Arrival(models.Model):
    """Input that arrived while a session of its key was open and the workflow queues it
    (``on_arrival="queue"``, ``arrivals.py``): kept until that session no longer waits, then
    started in id order (``started_session``), or refused (``error``) when it cannot be.

    ``session`` is the session it arrived for (the key's open session, or an AG-UI thread's);
    ``target`` says whether it starts a new session of the key or is the session's next message.
    """

    workflow = models.CharField(max_length=100)
    correlation_key = models.CharField(max_length=200, blank=True)
    session = models.ForeignKey(WorkflowSession, on_delete=models.PROTECT, related_name="arrivals")
    target = models.CharField(max_length=20, choices=ArrivalTarget.choices)
    data = models.JSONField(help_text="The input as it arrived (already checked against the workflow's input).")
    user_id = models.CharField(max_length=200, help_text="Who sent it, e.g. webhook:refund or client:partner.")
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=ArrivalStatus.choices, default=ArrivalStatus.QUEUED)
    started_session = models.ForeignKey(
        WorkflowSession, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    error = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["workflow", "correlation_key", "status"], name="arrival_queued")]

    def __str__(self) -> str:
        return f"arrival {self.pk} for {self.correlation_key or self.session_id} ({self.status})"
