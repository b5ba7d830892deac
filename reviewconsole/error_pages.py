"""The 400, 403 and 404 answers of every URL Django could not serve (``handler400/403/404``), and
the JSON answer of a 500 (``unavailable.server_error``, the ``handler500``).

A browser gets the site's own page (``templates/400.html``, ``403.html``, ``404.html``,
``500.html``, ``403_csrf.html``): what happened and a way back, never the exception's text or
anything about the inside. The JSON doors keep their JSON: a request to ``/api/``, ``/hooks/``
or ``/agui/``, or one that accepts JSON but not HTML, gets ``{"error": {"code", "message"}}``
(:mod:`reviewconsole.json_errors`) with ``invalid_request`` (400), ``forbidden`` (403),
``not_found`` (404) or ``internal_error`` (500).

A wrong method (Django's ``require_POST`` and django-ninja's operations answer an empty or
plain-text ``405``) is made JSON too by :class:`MethodNotAllowedMiddleware`:
``405 {"error": {"code": "method_not_allowed", "message", "allowed": [...]}}`` with the same
``Allow`` header, for the same requests as above.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.http.response import HttpResponseBase
from django.views import defaults

from .json_errors import error_response

__all__ = [
    "MethodNotAllowedMiddleware",
    "bad_request",
    "internal_error",
    "method_not_allowed",
    "page_not_found",
    "permission_denied",
    "wants_json",
]

JSON_DOORS = ("/api/", "/hooks/", "/agui/")


def wants_json(request: HttpRequest) -> bool:
    """A JSON door's path, or a client that accepts JSON and not HTML."""
    if request.path.startswith(JSON_DOORS):
        return True
    accept = request.headers.get("Accept", "")
    return "json" in accept and "html" not in accept


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_json(request):
        return error_response(404, "not_found", "There is nothing at this address.")
    return defaults.page_not_found(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_json(request):
        return error_response(403, "forbidden", "You may not do that.")
    return defaults.permission_denied(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_json(request):
        return error_response(400, "invalid_request", "The request could not be read.")
    return defaults.bad_request(request, exception)


def internal_error() -> HttpResponse:
    """The 500 of a JSON door (the details go to the server log, never to the caller)."""
    return error_response(500, "internal_error", "Something went wrong on our side; it has been logged.")


def method_not_allowed(request: HttpRequest, allow: str) -> HttpResponse:
    """``405 method_not_allowed`` in the one format; ``allow`` is the ``Allow`` header's value
    (``"POST"``, ``"GET, POST"``), kept as the header and listed as ``allowed``."""
    allowed = [method.strip() for method in allow.split(",") if method.strip()]
    message = f"{request.method} is not allowed here; use {' or '.join(allowed) or 'another method'}."
    response = error_response(405, "method_not_allowed", message, allowed=allowed)
    response["Allow"] = allow
    return response


class MethodNotAllowedMiddleware:
    """Answer a JSON door's ``405`` (:func:`wants_json`) with :func:`method_not_allowed` instead of
    Django's empty page; any other response, and a browser's 405, pass unchanged."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if isinstance(response, HttpResponseNotAllowed) and wants_json(request):
            return method_not_allowed(request, response.get("Allow", ""))
        return response
