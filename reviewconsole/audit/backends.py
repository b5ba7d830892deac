"""The login-throttling backend: django-axes for web logins, a no-op for calls without a request.

Axes refuses ``authenticate()`` without a request; a call without one is not a login over the web
(a management command, a script checking a password), and nothing can be throttled per address
there. Web logins (the login page, the admin) always pass the request and are throttled; a login
the lock refuses is marked on the request for the lockout page (``lockout.py``).
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from django.http import HttpRequest

from .lockout import REFUSED

__all__ = ["LoginThrottleBackend"]


class LoginThrottleBackend(AxesStandaloneBackend):
    """:class:`axes.backends.AxesStandaloneBackend` that lets request-less calls through to the next backend."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> None:
        if request is None:
            return None
        try:
            return super().authenticate(request, username, password, **kwargs)
        except AxesBackendPermissionDenied:
            setattr(request, REFUSED, True)  # locked before this attempt: no password was checked
            raise
