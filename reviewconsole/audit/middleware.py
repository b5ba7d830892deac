"""The request being handled, for audit entries written where no request is passed (signals).

:class:`AuditContextMiddleware` keeps the current request in a context variable for the duration
of the view; :func:`current_request` reads it. Works for sync and async views (context variables
follow the request through ``sync_to_async``).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

__all__ = ["AuditContextMiddleware", "current_request", "snapshots"]

_request: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar("audit_request", default=None)
_snapshots: contextvars.ContextVar[dict[tuple[str, str], Any] | None] = contextvars.ContextVar(
    "audit_snapshots", default=None
)


def current_request() -> HttpRequest | None:
    """The request being handled on this thread or task, or None (commands, tasks, tests)."""
    return _request.get()


def snapshots() -> dict[tuple[str, str], Any] | None:
    """Row snapshots taken before admin changes in this request, keyed by (model label, pk)."""
    return _snapshots.get()


class AuditContextMiddleware:
    """Makes the request available to :func:`current_request` while the view runs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        snap = _snapshots.set({})
        try:
            return self.get_response(request)
        finally:
            _snapshots.reset(snap)
            _request.reset(token)
