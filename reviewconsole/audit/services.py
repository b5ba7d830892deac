"""Recording audit entries. Call :func:`audit_record` in the same transaction as the action."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest

from .models import AuditEntry

__all__ = ["audit_record", "client_ip"]


def client_ip(request: HttpRequest | None) -> str | None:
    """The caller's address as the server saw it (``REMOTE_ADDR``).

    Django trusts no forwarding header itself; behind a balancer, ``daphne --proxy-headers`` sets
    ``REMOTE_ADDR`` from the first ``X-Forwarded-For`` address, so the balancer must overwrite
    that header with the client's address (README, "Scale out": the nginx block).
    """
    if request is None:
        return None
    return request.META.get("REMOTE_ADDR") or None


def audit_record(
    *,
    action: str,
    user: AbstractBaseUser | AnonymousUser | None = None,
    actor: str | None = None,
    target: Any = None,
    target_type: str = "",
    target_id: str = "",
    request: HttpRequest | None = None,
    before: Any = None,
    after: Any = None,
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry. ``target`` (a model instance) fills ``target_type`` and ``target_id``.

    ``actor`` defaults to ``user:<username>`` for a user, else ``system`` (API clients pass
    ``client:<name>``, webhooks ``webhook:<slug>``). ``request`` gives the address and user agent.
    Long values are cut to the columns' widths rather than refused: an audit entry is never lost
    because a caller sent a long user agent or id.
    """
    person = user if user is not None and user.is_authenticated else None
    if target is not None:
        target_type = target_type or target._meta.label_lower
        target_id = target_id or str(target.pk)
    return AuditEntry.objects.create(
        action=action[:60],
        actor_user=person,
        actor=(actor or (f"user:{person.get_username()}" if person is not None else "system"))[:200],
        target_type=target_type[:60],
        target_id=target_id[:200],
        ip=client_ip(request),
        user_agent=(request.headers.get("User-Agent", "")[:500] if request is not None else ""),
        before=before,
        after=after,
        detail=detail or {},
    )
