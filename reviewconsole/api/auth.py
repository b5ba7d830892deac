"""Bearer-token authentication for API clients (``Authorization: Bearer <token>``).

:func:`client_for_request` is the contract other doors use (the AG-UI endpoint too): it returns the
active client or None, and records nothing. :class:`ClientBearer` is the API's authenticator: the
same lookup, plus an audit entry (``token.use``) for every authenticated call.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from ..audit.services import audit_record
from .models import ApiClient, hash_token

__all__ = ["ClientBearer", "client_for_request", "refusal_message"]

MAX_TOKEN_CHARS = 200
LAST_USED_EVERY = 60.0
"""Seconds: an API client's ``last_used_at`` is kept to this precision (:func:`client_for_request`)."""


def _bearer(request: HttpRequest) -> tuple[str, str]:
    """``(scheme, token)`` of the request's ``Authorization`` header (both "" when there is none)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return scheme, token.strip()


def client_for_request(request: HttpRequest) -> ApiClient | None:
    """The active client whose token the request carries, or None (missing, unknown or revoked).

    Its ``last_used_at`` is written when it is older than :data:`LAST_USED_EVERY` seconds (or
    unset): to the minute, which is what the admin shows it for, without a write on every call
    (on SQLite each write waits for the database's one write lock, taken by every run's commit).
    """
    scheme, token = _bearer(request)
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS:
        return None
    client = ApiClient.objects.filter(token_hash=hash_token(token), revoked_at__isnull=True).first()
    if client is not None:
        now = timezone.now()
        if client.last_used_at is None or (now - client.last_used_at).total_seconds() >= LAST_USED_EVERY:
            ApiClient.objects.filter(pk=client.pk).update(last_used_at=now)
            client.last_used_at = now
    return client


def refusal_message(request: HttpRequest) -> str:
    """What a ``401 unauthorized`` says to a request :func:`client_for_request` refused: that no
    token was sent, that the header is not ``Bearer <token>``, or that the token is wrong (unknown,
    or revoked). Never which client a token was, nor anything of the token."""
    scheme, token = _bearer(request)
    if not scheme:
        return "Send an API token: Authorization: Bearer <token>."
    if scheme.lower() != "bearer" or not token:
        return "The Authorization header must be 'Bearer <token>'."
    return "The API token is wrong: no active API client has it (unknown or revoked)."


class ClientBearer(HttpBearer):
    """django-ninja authenticator: ``request.auth`` becomes the :class:`ApiClient`."""

    def __call__(self, request: HttpRequest) -> ApiClient | None:
        client = client_for_request(request)
        if client is not None:
            audit_record(
                action="token.use",
                actor=f"client:{client.name}",
                target=client,
                request=request,
                detail={"method": request.method, "path": request.path[:300]},
            )
        return client

    def authenticate(self, request: HttpRequest, token: str) -> ApiClient | None:  # pragma: no cover (unused)
        return client_for_request(request)
