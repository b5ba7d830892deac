"""One-time tokens of the "New request" form: the same form sent twice starts one session.

:func:`issue_token` makes a :class:`~reviewconsole.console.models.StartToken` for a user and a
workflow (the form carries its key in ``start_token``). :func:`start_once` claims it with a
conditional ``UPDATE`` in the transaction that starts the session, so of two copies of a POST
racing, one starts the session and the other waits on the row (PostgreSQL's row lock, SQLite's
``IMMEDIATE`` write lock) and then finds the token used: it gets the same session. A start that
fails (the value fails its schema) rolls the claim back, so the form can be sent again.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from ..workflow_sessions.models import WorkflowSession
from .models import StartToken

__all__ = ["TOKEN_TTL", "StartTokenError", "issue_token", "start_once"]

TOKEN_TTL = timedelta(days=1)
"""How long a form's token is kept: a form older than that is refused (and sent again afresh)."""


class StartTokenError(Exception):
    """The POST carries no token of this user and workflow (missing, forged or expired)."""


def issue_token(user: AbstractBaseUser, workflow: str) -> str:
    """A new token's key for ``user``'s form of ``workflow`` (tokens past :data:`TOKEN_TTL` are deleted)."""
    now = timezone.now()
    StartToken.objects.filter(created_at__lt=now - TOKEN_TTL).delete()
    key = secrets.token_urlsafe(32)
    StartToken.objects.create(key=key, user_id=user.pk, workflow=workflow, created_at=now)
    return key


def start_once(
    user: AbstractBaseUser, workflow: str, key: str, start: Callable[[], WorkflowSession]
) -> tuple[WorkflowSession, bool]:
    """Run ``start()`` once for the token ``key``: ``(session, True)`` when this call started it,
    ``(the session the token started, False)`` when an earlier POST of the same form did.

    Raises:
        StartTokenError: no live token ``key`` of ``user`` and ``workflow``.
        whatever ``start`` raises (the token stays unused).
    """
    tokens = StartToken.objects.filter(
        key=key, user_id=user.pk, workflow=workflow, created_at__gte=timezone.now() - TOKEN_TTL
    )
    with transaction.atomic():
        if tokens.filter(session__isnull=True).update(claimed_at=timezone.now()) == 1:
            session = start()
            tokens.update(session=session)
            return session, True
        used = tokens.select_related("session").first()
    if used is None or used.session is None:
        raise StartTokenError(key)
    return used.session, False
