"""Requests whose URL or headers hold a NUL character are refused with a 400 before any view.

PostgreSQL's ``text`` cannot hold U+0000: a NUL in a search query, an id in the path or a header
value (``Idempotency-Key``) reached a query or a write and failed with a 500. Bodies are checked
by each door (:mod:`reviewconsole.json_input`); this covers what comes before the body: the path,
the query string (percent-decoded, as views read it), cookies and header values.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from ..error_pages import wants_json
from ..json_errors import error_response

__all__ = ["MESSAGE", "RefuseNulMiddleware", "RefuseOverflowMiddleware", "has_nul"]

MESSAGE = "The URL or a header contains a NUL character (U+0000)."


def has_nul(request: HttpRequest) -> bool:
    """Whether the path, a query value or key, a cookie or a header value holds U+0000."""
    if "\x00" in request.path:
        return True
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return True
    if any("\x00" in key or "\x00" in value for key, value in request.COOKIES.items()):
        return True
    return any("\x00" in str(value) for key, value in request.META.items() if key.startswith("HTTP_"))


class RefuseNulMiddleware:
    """Answer 400 (JSON ``{"error": {"code": "invalid_request", ...}}`` for a JSON door or a
    caller that asks for JSON, :func:`~reviewconsole.error_pages.wants_json`; a one-line page
    otherwise) to a request :func:`has_nul` finds a NUL in."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not has_nul(request):
            return self.get_response(request)
        if wants_json(request):
            return error_response(400, "invalid_request", MESSAGE)
        page = f"<!doctype html><title>Bad request</title><p>{MESSAGE}</p>"
        return HttpResponse(page, status=400, content_type="text/html; charset=utf-8")


class RefuseOverflowMiddleware:
    """Answer 400 when a view fails with ``OverflowError``: a number in the request too large for
    the database or a date (``/admin/…/?created_at__year=99999999999999999999``), never a 500;
    JSON for a caller that wants it, as :class:`RefuseNulMiddleware`."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OverflowError):
            return None
        message = "A number in the request is too large."
        if wants_json(request):
            return error_response(400, "invalid_request", message)
        page = f"<!doctype html><title>Bad request</title><p>{message}</p>"
        return HttpResponse(page, status=400, content_type="text/html; charset=utf-8")
