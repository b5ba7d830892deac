"""HTTP reason phrases for the status line Daphne writes.

Daphne hands the status code to Twisted, whose table of reason phrases stops at the older codes:
422 (an API idempotency key reused for another request) and 429 (the login lockout, a webhook
endpoint's rate limit) went out as ``HTTP/1.1 429 Unknown Status``. :func:`install` adds every
phrase Python's :class:`http.HTTPStatus` knows and Twisted does not (it never changes one Twisted
has); ``reviewconsole.asgi`` calls it, so it holds for ``daphne`` and ``manage.py serve`` alike.
"""

from __future__ import annotations

from http import HTTPStatus

from twisted.web import http

__all__ = ["install"]


def install() -> None:
    """Teach Twisted (Daphne's HTTP server) the reason phrases it lacks."""
    for status in HTTPStatus:
        http.RESPONSES.setdefault(status.value, status.phrase.encode("latin-1"))
