"""API clients (hashed bearer tokens scoped to workflows and queues, a webhook secret), the
reviews they asked for, and idempotency records."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.db import models

from ..outbound.models import new_secret

TOKEN_PREFIX = "rc_"  # noqa: S105 (a prefix that makes tokens recognisable, not a secret)

SCOPE_OWN_SESSIONS = "own_sessions"
"""The token reads and answers only the sessions its own client started (API or AG-UI)."""
SCOPE_OVERRIDE_CLAIMS = "override_claims"
"""The token may answer an interrupt a reviewer has claimed (without it: 409 ``interrupt_claimed``)."""
SCOPES = {
    SCOPE_OWN_SESSIONS: "Only the sessions this client started",
    SCOPE_OVERRIDE_CLAIMS: "May answer requests a reviewer has claimed",
}


def hash_token(token: str) -> str:
    """SHA-256 hex of a token; tokens are random (256 bits), so no salt or slow hash is needed."""
    return hashlib.sha256(token.encode()).hexdigest()


def _all_queues() -> list[str]:
    return ["*"]


class ApiClient(models.Model):
    """An outside system. Its token is shown once at creation and stored only as a hash."""

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    token_prefix = models.CharField(max_length=12, editable=False, help_text="First characters, to recognise it.")
    workflows = models.JSONField(default=list, blank=True, help_text='Workflow names it may use; ["*"] for all.')
    scopes = models.JSONField(
        default=list, blank=True, help_text=f"Extra limits and rights: {', '.join(SCOPES)} (see api/models.py)."
    )
    queues = models.JSONField(
        default=_all_queues, blank=True, help_text='Queue slugs it may ask reviews in; ["*"] for all.'
    )
    webhook_secret = models.CharField(
        max_length=200,
        default=new_secret,
        editable=False,
        help_text="whsec_…: signs the review.decided events sent to its reviews' callback_url (shown once).",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "API client"
        verbose_name_plural = "API clients"

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def new_token() -> str:
        """A fresh random token (``rc_`` + 43 url-safe characters)."""
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    def set_token(self, token: str) -> None:
        """Store ``token``'s hash (the token itself is never stored)."""
        self.token_hash = hash_token(token)
        self.token_prefix = token[:12]

    @property
    def own_sessions_only(self) -> bool:
        return SCOPE_OWN_SESSIONS in self.scopes

    @property
    def may_override_claims(self) -> bool:
        return SCOPE_OVERRIDE_CLAIMS in self.scopes

    @property
    def session_owners(self) -> list[str]:
        """The ``user_id`` of the sessions this client started (through the API or AG-UI)."""
        return [f"client:{self.name}", f"agui:{self.name}"]

    def may_use(self, workflow: str) -> bool:
        """True when the client is active and scoped to ``workflow``."""
        return self.revoked_at is None and ("*" in self.workflows or workflow in self.workflows)

    def may_ask(self, queue: str) -> bool:
        """True when the client is active and scoped to the queue ``queue`` (a slug) for reviews."""
        queues = self.queues if isinstance(self.queues, list) else []
        return self.revoked_at is None and ("*" in queues or queue in queues)


def new_review_id() -> str:
    """A review's id: ``rv_`` + 32 hex digits."""
    return f"rv_{uuid.uuid4().hex}"


class Review(models.Model):
    """A review an API client asked for (``POST /api/v1/reviews``): a session of the built-in
    ``review`` workflow (``workflows/review.py``). What was asked is kept here as the client sent
    it; the decision is the session's interrupt's (``api/reviews.py`` reads it)."""

    id = models.CharField(primary_key=True, max_length=64, default=new_review_id, editable=False)
    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="reviews")
    session = models.OneToOneField("workflow_sessions.WorkflowSession", on_delete=models.PROTECT, related_name="review")
    title = models.CharField(max_length=200)
    message = models.TextField()
    queue = models.CharField(max_length=100, help_text="The queue's slug.")
    kind = models.CharField(max_length=20)
    payload = models.JSONField(null=True, blank=True)
    response_schema = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    due_in_seconds = models.PositiveIntegerField(null=True, blank=True)
    on_expiry = models.CharField(max_length=20, blank=True)
    callback_url = models.URLField(max_length=500, blank=True)
    base_url = models.CharField(
        max_length=300, blank=True, help_text="scheme://host it was asked on: its event's absolute URLs."
    )
    revision_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revised_by"
    )
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.CharField(max_length=200, blank=True)
    cancel_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.title[:40]}"


class IdempotencyRecord(models.Model):
    """The first response to a write with an ``Idempotency-Key``; a repeat gets it again."""

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["client", "key"], name="idempotency_once")]

    def __str__(self) -> str:
        return f"{self.client} {self.key}"
