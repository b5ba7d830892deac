"""The blocking client of the review-request API (``/api/v1/reviews``); :mod:`.aio` is its async twin.

Shapes follow ``docs/reviews.md`` in the reviewconsole repository. Every method raises a typed
:class:`~reviewconsole_client.errors.ApiError` for a refusal (after retrying what may be retried,
see :mod:`._protocol`) and :class:`~reviewconsole_client.errors.ConsoleUnavailableError` when the
console cannot be reached.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from . import _protocol as p
from .errors import ReviewTimeoutError
from .reviews import Review

__all__ = ["Client"]


def review_id(review: Review | str) -> str:
    return review if isinstance(review, str) else review.id


class Client:
    """A client of one console, authenticated with one API token.

    ``base_url`` is the console's address (``https://console.example.com``; ``…/api/v1`` works
    too), ``token`` an API client's token (admin → API clients). ``timeout`` is seconds per HTTP
    request (a long-poll adds its wait), ``retries`` the tries after the first one for errors
    worth retrying. ``http`` is an ``httpx.Client`` of your own (proxies, certificates); the
    client closes only one it made itself. Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = p.api_base(base_url)
        self.timeout = timeout
        self.policy = p.RetryPolicy(retries=retries, backoff=backoff)
        self._headers = p.headers(token)
        self._own_http = http is None
        self._http = http or httpx.Client()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections (only those of an ``httpx.Client`` this client made)."""
        if self._own_http:
            self._http.close()

    def ask(
        self,
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
        idempotency_key: str | None = None,
    ) -> Review:
        """File a review request in ``queue``'s inbox (``POST /api/v1/reviews``); the new :class:`Review`.

        ``payload`` (JSON) is shown to the reviewer; ``response_schema`` (a JSON Schema object)
        generates the form and validates the answer; ``kind`` is ``text``, ``confirm``, ``draft``
        or ``form``; ``due_in_seconds`` (> 0) and ``on_expiry`` (``escalate`` or ``timeout``) set
        a due time; ``metadata`` comes back as given; ``revision_of`` names an earlier review it
        supersedes; ``callback_url`` receives the signed ``review.decided`` event.
        ``idempotency_key``: one is generated per call when not given, and every retry of the
        call sends the same one, so the review is filed once. Raises ``BadRequestError``
        (``schema_invalid``, ``queue_unknown``…), ``ForbiddenError`` (``queue_forbidden``),
        ``NotFoundError`` (``revision_of`` unknown).
        """
        body = p.ask_body(
            title=title,
            message=message,
            queue=queue,
            payload=payload,
            response_schema=response_schema,
            kind=kind,
            due_in_seconds=due_in_seconds,
            on_expiry=on_expiry,
            metadata=metadata,
            revision_of=revision_of,
            callback_url=callback_url,
        )
        return Review.from_json(self._request("POST", "/reviews", json=body, key=idempotency_key or p.new_key()))

    def get(self, review: Review | str, *, wait: float | None = None) -> Review:
        """The review now (``GET /api/v1/reviews/{id}``); with ``wait`` (0–60 s) once it is no
        longer pending or ``wait`` elapsed. Raises ``NotFoundError`` for a review of another client."""
        params = {} if wait is None else {"wait": p.wait_param(wait)}
        timeout = self.timeout + (wait or 0)
        path = f"/reviews/{review_id(review)}"
        return Review.from_json(self._request("GET", path, params=params, timeout=timeout))

    def wait(self, review: Review | str, *, timeout: float) -> Review:
        """Block until the review is decided, cancelled, expired or superseded; that :class:`Review`.

        Long-polls ``GET ?wait=`` (at most 60 s a request) until ``timeout`` seconds have passed,
        riding out restarts of the console (connection errors are retried until the deadline).
        Raises :class:`~reviewconsole_client.errors.ReviewTimeoutError` (a ``TimeoutError``)
        carrying the review as last seen when it is still pending at the deadline.
        """
        deadline = time.monotonic() + timeout
        current = review if isinstance(review, Review) else None
        while True:
            left = deadline - time.monotonic()
            if current is not None and (current.done or left <= 0):
                break
            path = f"/reviews/{review_id(review)}"
            chunk = max(0.0, min(p.MAX_WAIT, left))
            data = self._request(
                "GET", path, params={"wait": f"{chunk:.3f}"}, timeout=self.timeout + chunk, deadline=deadline
            )
            current = Review.from_json(data)
        if not current.done:
            raise ReviewTimeoutError(current, timeout)
        return current

    def cancel(self, review: Review | str, *, reason: str | None = None, idempotency_key: str | None = None) -> Review:
        """Cancel a pending review (``POST …/cancel``); the review, status ``cancelled``.

        Raises ``ConflictError`` (``review_decided`` / ``review_cancelled``, ``details`` naming
        ``by`` and ``at``) when it was decided or cancelled first.
        """
        body = {} if reason is None else {"reason": reason}
        path = f"/reviews/{review_id(review)}/cancel"
        return Review.from_json(self._request("POST", path, json=body, key=idempotency_key or p.new_key()))

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        key: str | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> Any:
        """One API call with retries; ``deadline`` (monotonic) retries until then instead of counting."""
        headers = dict(self._headers)
        if key is not None:
            headers["Idempotency-Key"] = key
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.request(
                    method,
                    self.base_url + path,
                    json=json,
                    params=params,
                    headers=headers,
                    timeout=timeout or self.timeout,
                )
            except httpx.TransportError as exc:
                error: httpx.TransportError | None = exc
            else:
                error = None
                if not p.retryable(response):
                    return p.value_of(response)
            delay = self.policy.delay(attempt, response)
            out_of_tries = attempt >= self.policy.retries if deadline is None else time.monotonic() + delay > deadline
            if out_of_tries:
                if error is not None:
                    raise p.unavailable(error, attempt + 1)
                assert response is not None
                return p.value_of(response)
            time.sleep(delay)
            attempt += 1
