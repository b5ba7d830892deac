"""API clients (hashed bearer tokens scoped to workflows) and idempotency records."""

from __future__ import annotations

import hashlib
import secrets

from django.db import models

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


class ApiClient(models.Model):
    """An outside system. Its token is shown once at creation and stored only as a hash."""

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    token_prefix = models.CharField(max_length=12, editable=False, help_text="First characters, to recognise it.")
    workflows = models.JSONField(default=list, blank=True, help_text='Workflow names it may use; ["*"] for all.')
    scopes = models.JSONField(
        default=list, blank=True, help_text=f"Extra limits and rights: {', '.join(SCOPES)} (see api/models.py)."
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

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
