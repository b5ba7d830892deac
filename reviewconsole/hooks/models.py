"""Webhook endpoints, their signing secrets, and every delivery received."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models


class WebhookEndpoint(models.Model):
    """``POST /hooks/<slug>/`` starts a session of ``workflow`` with the verified JSON body."""

    slug = models.SlugField(unique=True)
    workflow = models.CharField(max_length=100, help_text="Registered workflow name, e.g. email-review.")
    enabled = models.BooleanField(default=True)
    description = models.TextField(blank=True)
    input_mapping = models.JSONField(
        default=dict,
        blank=True,
        help_text='Optional: the workflow input built from the body, {"input_field": "dotted.path.in.body"}; '
        "empty passes the body unchanged.",
    )
    thread_key = models.CharField(
        max_length=200,
        blank=True,
        help_text="Optional: where a delivery's thread key is, a JSON pointer into the body (/ticket/id) "
        "or header:<name> (header:X-Thread-Id). Input for a key whose session is still open follows the "
        "workflow's on_arrival policy (reject, queue or supersede).",
    )
    rate_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Deliveries accepted per minute (empty: the site default)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        """The mapping must be ``{str: str}`` (input field → dotted path in the body); the thread
        key a JSON pointer (``/a/b``) or ``header:<name>``."""

        mapping = self.input_mapping
        if not isinstance(mapping, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
        ):
            raise ValidationError({"input_mapping": 'Use {"input_field": "dotted.path.in.body"}.'})
        key = self.thread_key
        if key and not (key.startswith("/") or (key.startswith("header:") and key[len("header:") :].strip())):
            raise ValidationError({"thread_key": "Use a JSON pointer such as /ticket/id, or header:X-Thread-Id."})


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
    """One delivery of a webhook; a repeated ``webhook-id`` with the same body answers with the
    first response, with another body 422 ``webhook_id_reused``.

    ``body_sha256`` is the hex SHA-256 of the raw body as received; ``""`` on rows stored before
    the digest was kept, which means "unknown": any body counts as the same (the first answer).
    """

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
    body = models.TextField(blank=True, help_text="The body as received, kept for replay (up to a size cap).")
    thread_key = models.CharField(
        max_length=200,
        blank=True,
        help_text="The thread key the delivery named (kept for replay: a header's key is not in the body).",
    )
    body_kept = models.BooleanField(default=False, help_text="False when the body was over the cap.")
    body_sha256 = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="SHA-256 of the raw body (hex), also when the body was not kept: a copy with this "
        "webhook-id and another body is refused. Empty on deliveries stored before it was kept.",
    )
    duplicates = models.PositiveIntegerField(default=0, help_text="Copies received again with this webhook-id.")
    last_duplicate_at = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="replays",
        help_text="Replayed by an admin.",
    )

    class Meta:
        ordering = ["-received_at"]
        verbose_name_plural = "webhook deliveries"
        permissions = [("replay_webhookdelivery", "Can replay webhook deliveries")]
        constraints = [models.UniqueConstraint(fields=["endpoint", "webhook_id"], name="webhook_delivery_once")]

    def __str__(self) -> str:
        return f"{self.webhook_id} ({self.outcome})"


class RateWindow(models.Model):
    """Deliveries counted per endpoint per minute, in the database so every web process shares them."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "window_start"], name="rate_window_once")]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.window_start:%H:%M}: {self.count}"
