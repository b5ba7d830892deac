"""The login lockout page (django-axes' ``AXES_LOCKOUT_CALLABLE``), in the console's login style.

``AXES_FAILURE_LIMIT`` failed logins in a row for one username from one address lock that pair
out for ``AXES_COOLOFF_TIME``; README: "locks a username out from an address for 15 minutes after
5 failed logins (429)". So the attempt that reaches the limit was checked like the ones before it:
it gets the login page with "didn't match" and the news that logging in is now locked (200). Every
later attempt, even with the right password, is refused unchecked (the throttling backend marks
it, ``backends.py``) with 429 and how long the lock lasts. Axes counts a refused attempt as a
failure too, so each one starts the wait again: the page says so.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

__all__ = ["REFUSED", "lockout_response"]

REFUSED = "reviewconsole_login_refused"
"""Set on a request whose login the lock refused before any password was checked."""


def _next(request: HttpRequest) -> str:
    """Where the login form's ``next`` pointed, when it is a URL of this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""


def lockout_response(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """The page for a login that reached or hit the lock (see the module docstring)."""
    if isinstance(original_response, dict) and credentials is None:
        credentials = original_response  # axes' async middleware passes the credentials second
    cool_off = get_cool_off(request) or dt.timedelta(0)
    minutes = max(1, math.ceil(cool_off.total_seconds() / 60))
    refused = bool(getattr(request, REFUSED, False))
    context = {
        "locked": True,
        "login_failed": not refused,  # this attempt was checked, and it was the last one allowed
        "refused": refused,
        "failure_limit": get_failure_limit(request, credentials),
        "lockout_minutes": minutes,
        "locked_until": timezone.now() + cool_off,
        "username": get_client_username(request, credentials) or "",
        "next": _next(request),
    }
    status = settings.AXES_HTTP_RESPONSE_CODE if refused else 200
    return render(request, "registration/login.html", context, status=status)
