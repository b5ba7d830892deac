"""Database outages and lock waits answered as short, retryable refusals, never a 500.

Two kinds of database error are not bugs and get their own answer:

- **busy** — a statement waited ``lock_timeout`` for a row another connection holds (PostgreSQL
  ``55P03``), lost a deadlock or serialization race (``40P01``, ``40001``), or SQLite said
  "database is locked": ``409`` ``{"error": {"code": "busy", ...}}`` with ``Retry-After: 1``. The
  transaction was rolled back; nothing was stored.
- **unavailable** — the database cannot be reached or is shutting down or restarting (no
  connection, connection lost, SQLSTATE class ``08``, ``57P01``–``57P03``, ``53xxx``): ``503``
  ``{"error": {"code": "database_unavailable", ...}}`` with ``Retry-After: 5``. Whatever the request was
  doing was not committed, unless the connection dropped while the commit itself was answered:
  a retried decision is then refused as already decided by its own author, never applied twice.

Any other error stays a 500. :class:`DatabaseErrorMiddleware` answers for exceptions raised in
views; :func:`server_error` (the ``handler500``) for those raised in middleware (e.g. loading
the login session). Both log the exception. JSON for API-like requests (``/api/``, ``/hooks/``,
or a client that does not accept HTML), a one-line page for browsers.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.views import defaults

from . import error_pages
from .json_errors import error_response

logger = logging.getLogger("reviewconsole.database")

__all__ = ["DatabaseErrorMiddleware", "classify", "refusal", "server_error"]

BUSY_STATES = {"55P03", "40P01", "40001"}
UNAVAILABLE_STATES = {"57P01", "57P02", "57P03"}
MESSAGES = {
    "busy": (409, "1", "This item is busy: someone else is changing it right now. Nothing was saved; try again."),
    "database_unavailable": (503, "5", "The service is briefly unavailable. Nothing was saved; try again shortly."),
    "stopping": (503, "5", "The console is restarting. Nothing was done; try again shortly."),
}


def classify(exc: BaseException) -> str | None:
    """``"busy"``, ``"database_unavailable"`` or None (not a database outage: a bug, keep the 500)."""
    if isinstance(exc, InterfaceError):
        return "database_unavailable"
    if not isinstance(exc, OperationalError):
        return None
    cause = exc.__cause__
    state = getattr(cause, "sqlstate", None) or getattr(getattr(cause, "diag", None), "sqlstate", None)
    if state in BUSY_STATES:
        return "busy"
    if state is None and type(cause).__module__.startswith("psycopg"):
        return "database_unavailable"  # no SQLSTATE: the connection failed or was lost
    if state is not None and (state[:2] in ("08", "53") or state in UNAVAILABLE_STATES):
        return "database_unavailable"
    text = str(exc).lower()
    if "database is locked" in text:
        return "busy"
    if "unable to open database" in text or "disk i/o error" in text:
        return "database_unavailable"
    return None


def _wants_json(request: HttpRequest) -> bool:
    if request.path.startswith(("/api/", "/hooks/", "/agui/")):
        return True
    accept = request.headers.get("Accept", "")
    return bool(accept) and "html" not in accept and "*/*" not in accept


def refusal(request: HttpRequest, kind: str) -> HttpResponse:
    """The answer for a :func:`classify` kind."""
    status, retry_after, message = MESSAGES[kind]
    response: HttpResponse
    if _wants_json(request):
        response = error_response(status, kind, message)
    else:
        page = f"<!doctype html><title>Try again</title><p>{message}</p>"
        response = HttpResponse(page, status=status, content_type="text/html; charset=utf-8")
    response["Retry-After"] = retry_after
    response["Cache-Control"] = "no-store"
    return response


def _answer(request: HttpRequest, exc: BaseException) -> HttpResponse | None:
    kind = classify(exc)
    if kind is None:
        return None
    logger.warning("%s %s: %s (%s)", request.method, request.path, kind, exc, exc_info=exc)
    return refusal(request, kind)


class DatabaseErrorMiddleware:
    """Turns a view's database outage or lock wait into a 503 / 409 (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return _answer(request, exception)


def server_error(request: HttpRequest, template_name: str = defaults.ERROR_500_TEMPLATE_NAME) -> HttpResponse:
    """``handler500``: a database outage outside a view still gets its 503; anything else a 500:
    ``internal_error`` JSON for a JSON door (``error_pages.wants_json``), else ``500.html``
    rendered without the request (no context processor, no database: it must not fail too)."""
    exc = sys.exception()
    answer = _answer(request, exc) if exc is not None else None
    if answer is not None:
        return answer
    if error_pages.wants_json(request):
        return error_pages.internal_error()
    return defaults.server_error(request, template_name)
