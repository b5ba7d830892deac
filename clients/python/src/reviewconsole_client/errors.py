"""Typed errors: each refusal of the API carries its ``{"error": {"code", "message", …}}``.

The console answers every refusal with one JSON shape (``docs/errors.md`` in the reviewconsole
repository); :class:`ApiError` keeps its ``code`` and ``message``, the HTTP ``status`` and the
other keys of the error object in ``details`` (e.g. ``by`` and ``at`` of ``409 review_decided``).
The subclass says what kind of refusal it is, so callers catch what they can handle.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "ConsoleUnavailableError",
    "ForbiddenError",
    "NotFoundError",
    "RateLimitedError",
    "ReviewConsoleError",
    "ReviewTimeoutError",
    "ServerError",
    "WebhookVerificationError",
    "error_for",
]


class ReviewConsoleError(Exception):
    """The base of every error this package raises."""


class ApiError(ReviewConsoleError):
    """The console refused a request.

    ``status`` is the HTTP status, ``code`` the stable error code (``queue_unknown``,
    ``review_decided``…; ``http_<status>`` when the body was not the API's error JSON),
    ``message`` its sentence for people, ``details`` the error object's other keys.
    """

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


class BadRequestError(ApiError):
    """400 (or 422): the request does not fit the API; nothing was stored."""


class AuthenticationError(ApiError):
    """401: the token is missing, wrong or revoked."""


class ForbiddenError(ApiError):
    """403: the token may not do this (e.g. ``queue_forbidden``)."""


class NotFoundError(ApiError):
    """404: no such review for this token (``review_unknown``)."""


class ConflictError(ApiError):
    """409: the review was decided or cancelled already (``details`` name ``by`` and ``at``)."""


class RateLimitedError(ApiError):
    """429 after the client's retries: the console asked to slow down."""


class ServerError(ApiError):
    """5xx after the client's retries."""


class ConsoleUnavailableError(ReviewConsoleError):
    """The console could not be reached (connection refused, reset, timed out) after the retries."""


class ReviewTimeoutError(ReviewConsoleError, TimeoutError):
    """:meth:`Client.wait` gave up: the review was still pending when its ``timeout`` ran out.

    ``review`` is the review as last seen (status ``pending``); waiting again later is safe.
    """

    def __init__(self, review: Any, timeout: float) -> None:
        super().__init__(f"review {review.id} still pending after {timeout:g} s")
        self.review = review
        self.timeout = timeout


class WebhookVerificationError(ReviewConsoleError):
    """A webhook's signature, timestamp or body did not verify; the body must not be trusted."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: BadRequestError,
    429: RateLimitedError,
}


def error_for(status: int, body: Any) -> ApiError:
    """The typed error for a refusal with HTTP ``status`` and parsed JSON ``body`` (or ``None``)."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code") or f"http_{status}")
        message = str(error.get("message") or "")
        details = {k: v for k, v in error.items() if k not in {"code", "message"}}
    else:
        code, message, details = f"http_{status}", "The console answered without the API's error JSON.", {}
    cls = ServerError if status >= 500 else _BY_STATUS.get(status, ApiError)
    return cls(status, code, message, details)
