"""What the sync and the async client share: request bodies, retry rules, answers to values.

Retries follow the API's rules (README "Call the API", ``docs/errors.md``): a connection error,
a ``5xx``, a ``429`` or any answer with ``Retry-After`` (``409`` busy, ``503`` database away) is
tried again after ``Retry-After`` seconds when the console names them, else after an exponential
back-off (0.5 s, 1 s, 2 s… capped at :data:`MAX_BACKOFF`). Writes are retried with the same
``Idempotency-Key``, so a retry of a write that did happen gets the first answer and does nothing
again.
"""

from __future__ import annotations

import email.utils
import time
import uuid
from dataclasses import dataclass
from typing import Any, Final

import httpx

from .errors import ApiError, ConsoleUnavailableError, error_for

__all__ = [
    "API_PREFIX",
    "MAX_BACKOFF",
    "MAX_WAIT",
    "RetryPolicy",
    "api_base",
    "ask_body",
    "new_key",
    "value_of",
    "wait_param",
]

API_PREFIX: Final = "/api/v1"
MAX_WAIT: Final = 60.0  # seconds: the longest ``?wait=`` the API holds a request
MAX_BACKOFF: Final = 8.0  # seconds between two tries, at most (unless Retry-After says more)
MAX_RETRY_AFTER: Final = 120.0  # seconds: a longer Retry-After is capped
USER_AGENT: Final = "reviewconsole-client/0.1"


def api_base(base_url: str) -> str:
    """``https://host`` or ``https://host/api/v1`` (a trailing slash or not) → ``https://host/api/v1``."""
    base = base_url.rstrip("/")
    return base if base.endswith(API_PREFIX) else base + API_PREFIX


def wait_param(seconds: float) -> str:
    """``?wait=`` as the API reads it: digits with a decimal fraction, never an exponent
    (``2.5`` → ``"2.500"``, ``1e-05`` → ``"0.000"``); the API refuses a negative, NaN or over
    :data:`MAX_WAIT` (``400 wait_invalid``)."""
    return f"{seconds:.3f}"


def new_key() -> str:
    """A fresh idempotency key (random, 32 hex digits after ``rc-``)."""
    return f"rc-{uuid.uuid4().hex}"


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": USER_AGENT}


def ask_body(
    *,
    title: str,
    message: str,
    queue: str,
    payload: Any = None,
    response_schema: dict[str, Any] | None = None,
    kind: str | None = None,
    due_in_seconds: int | None = None,
    on_expiry: str | None = None,
    metadata: dict[str, Any] | None = None,
    revision_of: str | None = None,
    callback_url: str | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /api/v1/reviews``; arguments left ``None`` are not sent."""
    body: dict[str, Any] = {"title": title, "message": message, "queue": queue}
    optional = {
        "payload": payload,
        "response_schema": response_schema,
        "kind": kind,
        "due_in_seconds": due_in_seconds,
        "on_expiry": on_expiry,
        "metadata": metadata,
        "revision_of": revision_of,
        "callback_url": callback_url,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry: ``retries`` tries after the first, back-off from ``backoff`` s."""

    retries: int = 5
    backoff: float = 0.5

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 0)."""
        after = retry_after(response) if response is not None else None
        if after is not None:
            return after
        return float(min(MAX_BACKOFF, self.backoff * 2**attempt))


def retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` as seconds (a number or an HTTP date, RFC 9110 §10.2.3), capped; ``None`` if absent."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, min(MAX_RETRY_AFTER, seconds))


def retryable(response: httpx.Response) -> bool:
    """A ``5xx``, a ``429`` or an answer that says when to retry."""
    return response.status_code >= 500 or response.status_code == 429 or "Retry-After" in response.headers


def value_of(response: httpx.Response) -> Any:
    """The JSON of a 2xx answer; raises the typed :class:`ApiError` for any other."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success:
        if body is None:
            raise ApiError(response.status_code, "body_invalid", "The console's answer was not JSON.")
        return body
    raise error_for(response.status_code, body)


def unavailable(exc: httpx.TransportError, tries: int) -> ConsoleUnavailableError:
    error = ConsoleUnavailableError(f"the console could not be reached after {tries} tries: {exc!r}")
    error.__cause__ = exc
    return error
