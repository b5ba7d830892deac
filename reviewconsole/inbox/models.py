"""Review queues, items (what reviewers decide: one per engine interrupt) and each queue's change log.

An :class:`Item` row is the reviewer's item for an engine interrupt (the session's own
``workflow_sessions.Interrupt``, linked one-to-one as ``session_interrupt``): the inbox's outbox
consumer (``outbox_consumer.py``) builds it when the store reports the interrupt opened, and marks
it resolved or cancelled when the store reports that; the answer itself is taken (once: a
conditional update) on the session's interrupt. Queue membership comes from Django groups: ``group``
holds the reviewers, ``managers`` the people who may reassign and take over claimed items.

Every change to a queue's items (created, claimed, resolved, expired…) appends a
:class:`QueueChange` with the queue's next ``version``, in the transaction of the change, so a
client that knows a version can ask for exactly what it missed.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .conf import inbox_setting


class Queue(models.Model):
    """A review queue; its reviewers are the members of ``group``, its managers of ``managers``."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    group = models.ForeignKey(Group, on_delete=models.PROTECT, related_name="review_queues")
    managers = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="managed_queues",
        help_text="Members may reassign and take over claimed items (and decide them).",
    )
    claim_ttl_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="How long a claim lasts; empty: REVIEWCONSOLE['CLAIM_TTL']."
    )
    version = models.PositiveBigIntegerField(default=0, help_text="Bumped by every change to the queue's items.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def claim_ttl(self) -> dt.timedelta:
        """How long a claim in this queue lasts."""
        seconds = self.claim_ttl_seconds or inbox_setting("CLAIM_TTL")
        return dt.timedelta(seconds=seconds)


class ItemStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RESOLVED = "resolved", "Resolved"
    CANCELLED = "cancelled", "Cancelled"


SESSION_FAILED = "session_failed"
"""The ``decision`` of an item its session's failure cancelled (a Retry asks it again as a new row
with the same ``interrupt_id``)."""


CANCELLED = "cancelled"
"""The ``decision`` of an item a queue manager (or an API client) cancelled: the workflow received
the cancelled answer (``engine.cancelled_answer``); the item is ``resolved``, by whom and why in
``decided_by_label`` and ``reason``."""


POLICY_LABEL = "policy: "
"""How an item decided by a rule names its decider (``decided_by_label``): ``policy: <rule name>``."""
STANDING_LABEL = "standing approval #"
"""How an item decided by a standing approval names it: ``standing approval #<id> (granted by <user>)``."""


class OnExpiry(models.TextChoices):
    NOTHING = "", "Stay overdue"
    ESCALATE = "escalate", "Escalate to another queue"
    TIMEOUT = "timeout", "Resume the workflow with a timeout"


class Item(models.Model):
    """A request for input, routed to a queue, decided at most once."""

    session = models.ForeignKey("workflow_sessions.WorkflowSession", on_delete=models.PROTECT, related_name="items")
    # Not ``interrupt``: its column would clash with ``interrupt_id``, the wire id below.
    session_interrupt = models.OneToOneField(
        "workflow_sessions.Interrupt", null=True, blank=True, on_delete=models.PROTECT, related_name="item"
    )
    workflow = models.CharField(max_length=100, blank=True, help_text="The session's workflow (for filters).")
    title = models.CharField(max_length=200, blank=True, help_text="The session's title when the item was created.")
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
    search_text = models.TextField(
        blank=True,
        help_text="Lower-cased title, message, payload and the row's title and summary, for search.",
    )
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="items")
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.PENDING)
    # Claims: who works on it now; a claim past ``claim_expires_at`` counts as no claim.
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="claims"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    # Time: when it is due and what happens then (see inbox/items/expiry.py).
    due_at = models.DateTimeField(null=True, blank=True)
    on_expiry = models.CharField(max_length=20, choices=OnExpiry.choices, blank=True, default=OnExpiry.NOTHING)
    escalate_to = models.CharField(max_length=50, blank=True, help_text="Queue slug for on_expiry=escalate.")
    expired_at = models.DateTimeField(null=True, blank=True, help_text="When its due time passed and expiry ran.")
    escalated_from = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.PROTECT, related_name="escalated_items"
    )
    deferred_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set by a defer (inbox/items/lifecycle.py): the new due time it was put off to.",
    )
    # The decision.
    response = models.JSONField(null=True, blank=True, help_text="The answer the workflow received.")
    decision = models.CharField(max_length=30, blank=True, help_text="approve, reject, revise, answer, timeout…")
    reason = models.TextField(blank=True, help_text="The reviewer's reason (e.g. for a rejection).")
    edit_diff = models.TextField(blank=True, help_text="Unified diff of the reviewer's edit to the draft.")
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
        # Each matches a query of inbox/items/selectors.py (keyset pages per queue); see docs/architecture.md.
        indexes = [
            models.Index(fields=["queue", "status", "created_at", "id"], name="interrupt_queue_page"),
            models.Index(fields=["queue", "status", "due_at", "id"], name="interrupt_queue_due"),
            models.Index(fields=["queue", "status", "workflow", "created_at", "id"], name="interrupt_queue_wf"),
            models.Index(fields=["queue", "status", "kind", "created_at", "id"], name="interrupt_queue_kind"),
            models.Index(fields=["claimed_by", "status", "created_at", "id"], name="interrupt_claimed"),
            models.Index(fields=["decided_by", "status", "decided_at", "id"], name="interrupt_decided_by_at"),
            # A queue's decided page, newest decision first; the managers' dashboard's window of decisions.
            models.Index(fields=["queue", "status", "decided_at"], name="interrupt_queue_decided"),
            models.Index(fields=["status", "due_at"], name="interrupt_due"),
        ]

    def __str__(self) -> str:
        return f"{self.title or self.interrupt_id} ({self.status})"

    @property
    def is_pending(self) -> bool:
        return self.status == ItemStatus.PENDING

    def claim_holder(self, now: dt.datetime | None = None) -> int | None:
        """The id of the user whose claim is in force, or None."""
        now = now or timezone.now()
        if self.claimed_by_id and self.claim_expires_at and self.claim_expires_at > now:
            return self.claimed_by_id
        return None

    def is_overdue(self, now: dt.datetime | None = None) -> bool:
        return self.is_pending and self.due_at is not None and self.due_at <= (now or timezone.now())

    @property
    def display_status(self) -> str:
        """pending, claimed, deferred, overdue, decided, expired, cancelled, superseded, failed: what a
        person calls its state."""
        if self.status == ItemStatus.CANCELLED:
            return {SESSION_FAILED: "failed", CANCELLED: "cancelled"}.get(self.decision, "superseded")
        if self.status == ItemStatus.RESOLVED:
            return {"timeout": "expired", CANCELLED: "cancelled"}.get(self.decision, "decided")
        if self.is_overdue():
            return "overdue"
        if self.claim_holder():
            return "claimed"
        return "deferred" if self.deferred_until and self.deferred_until > timezone.now() else "pending"


class CommentKind(models.TextChoices):
    """What a comment records: a hand-off note, or the note of a lifecycle action."""

    COMMENT = "comment", "Comment"
    DEFER = "defer", "Deferred"
    RELEASE = "release", "Returned to the queue"
    ESCALATE = "escalate", "Escalated"
    CANCEL = "cancel", "Cancelled"


class Comment(models.Model):
    """A note on an item: a reviewer's hand-off note, or the note given with a defer, release,
    escalation or cancel (``kind``). Written by ``inbox/items/comments.py`` and ``lifecycle.py``;
    never edited (the audit log has its own entry). ``text`` is what a person (or an API client)
    wrote: pages escape it."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="comments")
    kind = models.CharField(max_length=20, choices=CommentKind.choices, default=CommentKind.COMMENT)
    text = models.TextField(blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    author_label = models.CharField(max_length=200, help_text="Who wrote it: a username or client:<name>.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["item", "created_at"], name="comment_item_time")]

    def __str__(self) -> str:
        return f"{self.kind} on item {self.item_id} by {self.author_label}"


class QueueChange(models.Model):
    """One change to a queue's items, numbered by the queue's ``version`` (gap-free, in order)."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="changes")
    version = models.PositiveBigIntegerField()
    event = models.CharField(max_length=40, help_text="interrupt.created, interrupt.claimed, interrupt.resolved…")
    item = models.ForeignKey(Item, null=True, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["queue", "version"]
        constraints = [models.UniqueConstraint(fields=["queue", "version"], name="queue_change_unique_version")]

    def __str__(self) -> str:
        return f"{self.queue_id}@{self.version} {self.event}"


class NotificationSent(models.Model):
    """A new-item email sent: to ``user``, about ``item`` arriving in ``queue`` (an escalated
    item is announced again in its new queue). Written after each send, so a ``notify_new_item``
    run again after a crash skips the people already told (at least once, not twice when recorded)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "queue", "user"], name="notification_sent_once"),
        ]

    def __str__(self) -> str:
        return f"item {self.item_id} → user {self.user_id}"
