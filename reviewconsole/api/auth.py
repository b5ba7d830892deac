"""Bearer-token authentication for API clients (``Authorization: Bearer <token>``)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone

from .models import ApiClient, hash_token

__all__ = ["client_for_request"]


def client_for_request(request: HttpRequest) -> ApiClient | None:
    """The active client whose token the request carries, or None (missing, unknown or revoked)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    client = ApiClient.objects.filter(token_hash=hash_token(token.strip()), revoked_at__isnull=True).first()
    if client is not None:
        ApiClient.objects.filter(pk=client.pk).update(last_used_at=timezone.now())
    return client
