"""Subscriptions to events, the messages sent for them, and every attempt at sending one."""

from __future__ import annotations

import base64
import secrets
import uuid

from django.db import models

EVENT_TYPES = ("interrupt.created", "interrupt.resolved", "session.completed", "session.failed", "review.decided")
"""The events a subscription may ask for."""


def new_secret() -> str:
    """A fresh Standard Webhooks secret: ``whsec_`` + base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class Subscription(models.Model):
    """An outside URL that receives the chosen events, signed with ``secret`` (Standard Webhooks)."""

    name = models.CharField(max_length=100, unique=True)
    url = models.URLField(max_length=500, help_text="Receives a POST per event (application/json).")
    secret = models.CharField(max_length=200, default=new_secret, help_text="whsec_…; the receiver verifies with it.")
    events = models.JSONField(default=list, help_text=f"Any of: {', '.join(EVENT_TYPES)}.")
    workflows = models.JSONField(default=list, blank=True, help_text="Only these workflows; empty for all.")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def wants(self, event_type: str, workflow: str) -> bool:
        """True when enabled and subscribed to ``event_type`` for ``workflow``."""
        return self.enabled and event_type in self.events and (not self.workflows or workflow in self.workflows)


class MessageStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class OutboundMessage(models.Model):
    """One event for one subscription, or for one callback URL (``url``, signed with the secret
    ``signer`` names: ``services.register_signer``); its id is the ``webhook-id`` of every attempt."""

    id = models.CharField(primary_key=True, max_length=64, default=new_message_id, editable=False)
    subscription = models.ForeignKey(
        Subscription, null=True, blank=True, on_delete=models.PROTECT, related_name="messages"
    )
    url = models.URLField(max_length=500, blank=True, help_text="A callback's URL (empty: the subscription's).")
    signer = models.CharField(
        max_length=100, blank=True, help_text="Whose secret signs a callback, e.g. api_client:3 (never the secret)."
    )
    event_type = models.CharField(max_length=40, db_index=True)
    payload = models.JSONField()
    status = models.CharField(
        max_length=20, choices=MessageStatus.choices, default=MessageStatus.PENDING, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    attempt_limit = models.PositiveIntegerField(help_text="Fails once attempts reach this; a redeliver raises it.")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    outbox_id = models.BigIntegerField(null=True, blank=True, help_text="The sessions' outbox event it comes from.")

    class Meta:
        ordering = ["-created_at"]
        permissions = [("redeliver_outboundmessage", "Can redeliver outbound messages")]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "outbox_id"],
                condition=models.Q(outbox_id__isnull=False),
                name="outbound_message_once_per_outbox_event",
            ),
            models.UniqueConstraint(
                fields=["url", "outbox_id"],
                condition=models.Q(subscription__isnull=True, outbox_id__isnull=False),
                name="outbound_callback_once_per_outbox_event",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.subscription or self.url} ({self.status})"


class Attempt(models.Model):
    """One POST of a message: when, the answer's status (None when none came), the error, the time taken."""

    message = models.ForeignKey(OutboundMessage, on_delete=models.PROTECT, related_name="attempt_log")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["message", "number"]

    def __str__(self) -> str:
        return f"attempt {self.number}: {self.status_code or self.error[:40]}"
