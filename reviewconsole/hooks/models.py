"""Webhook endpoints, their signing secrets, and every delivery received."""

from __future__ import annotations

from django.db import models


class WebhookEndpoint(models.Model):
    """``POST /hooks/<slug>/`` starts a session of ``workflow`` with the verified JSON body."""

    slug = models.SlugField(unique=True)
    workflow = models.CharField(max_length=100, help_text="Registered workflow name, e.g. email-review.")
    enabled = models.BooleanField(default=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class WebhookSecret(models.Model):
    """A signing secret (``whsec_…``). Several may be valid at once, for rotation without downtime."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="secrets")
    secret = models.CharField(max_length=200, help_text="Standard Webhooks secret, whsec_<base64>.")
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.label or f"secret {self.pk}"


class DeliveryOutcome(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    DUPLICATE = "duplicate", "Duplicate"
    REJECTED = "rejected", "Rejected"


class WebhookDelivery(models.Model):
    """One delivery of a webhook; a repeated ``webhook-id`` answers with the first response."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.PROTECT, related_name="deliveries")
    webhook_id = models.CharField(max_length=200)
    received_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=20, choices=DeliveryOutcome.choices)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField(default=dict)
    session = models.ForeignKey(
        "workflow_sessions.WorkflowSession", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [models.UniqueConstraint(fields=["endpoint", "webhook_id"], name="webhook_delivery_once")]

    def __str__(self) -> str:
        return f"{self.webhook_id} ({self.outcome})"
