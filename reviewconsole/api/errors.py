"""The one place the API's domain exceptions become HTTP answers.

Every refusal is ``{"error": {"code": str, "message": str, ...details}}`` (:mod:`reviewconsole.json_errors`,
the format of every door) with a stable ``code``:

| status | code | when |
|---|---|---|
| 400 | ``invalid_request`` | the body, a parameter or a header fails validation (``errors`` lists them) |
| 400 | ``interrupt_ambiguous`` | a resume names no interrupt while several are pending (``pending``) |
| 400 | ``answer_invalid`` / ``data_invalid`` | a payload or an input fails the workflow's schema (``errors``) |
| 400 | ``answer_missing`` | a free-text interrupt's payload is empty (``null``, ``{"result": null}``, blank text) |
| 400 | ``answer_too_long`` | feedback, a reason or a draft over 5,000 / 2,000 / 20,000 characters (``field``) |
| 400 | ``action_not_supported`` | the payload stands for a decision the request kind does not support (``actions``) |
| 400 | ``decision_ambiguous`` | the payload says two decisions at once: ``feedback`` beside an approval or a |
|  |  | rejection, or feedback text as the ``result`` beside an edited ``draft`` (``fields``, ``errors``) |
| 400 | ``decision_refused`` | a check of the workflow (``before_decision``) refused the decision: its message |
| 400 | ``schema_invalid`` / ``queue_unknown`` | a review's ``response_schema`` fails its metaschema or cannot be |
|  |  | drawn as a form (``errors``); its queue does not exist |
| 400 | ``callback_invalid`` / ``wait_invalid`` | a review's callback is refused; ``wait`` is not 0 to 60 seconds in |
|  |  | digits with an optional decimal fraction (``1e3``, ``-1``, ``nan``, `` 5``: the message gives the range) |
| 401 | ``unauthorized`` | no bearer token, or an unknown or revoked one |
| 403 | ``workflow_forbidden`` | the client's token is not scoped to that workflow |
| 403 | ``queue_forbidden`` | the client's token is not scoped to the review's queue |
| 404 | ``not_found`` | no such path under ``/api/v1/`` (:func:`unknown_path`) |
| 405 | ``method_not_allowed`` | a method the operation does not take (``Allow``, ``allowed``; |
|  |  | ``reviewconsole.error_pages.MethodNotAllowedMiddleware``) |
| 400 | ``args_digest_required`` | an approval of a tool call without ``interrupt_id`` or ``payload.args_digest`` |
| 404 | ``session_not_found`` / ``workflow_unknown`` | none, or out of scope |
| 409 | ``interrupt_unknown`` | a resume names an interrupt the session never had (a forged id; audited) |
| 409 | ``args_changed`` | an approval's ``args_digest`` is not the call's (``given``; never the expected one) |
| 404 | ``review_unknown`` | no such review, or another client's |
| 409 | ``interrupt_decided`` | someone answered first, or this client otherwise (``decided_by``, ``decided_at``, |
|  |  | ``decision``) |
| 409 | ``interrupt_cancelled`` | its client, AG-UI's or a queue manager cancelled it (``cancelled_by``, |
|  |  | ``cancelled_at``, ``reason``) |
| 409 | ``interrupt_claimed`` | a reviewer holds the claim; tokens with the ``override_claims`` scope may answer |
| 409 | ``interrupt_superseded`` | a newer request of the session replaced it ("superseded: a newer request exists"; |
|  |  | ``newer_interrupt_id``, the session's ``url``) |
| 409 | ``interrupt_moved`` / ``interrupt_expired`` / ``interrupt_not_claimed`` | a lifecycle action the request no |
|  |  | longer takes: moved to another queue, expired, nobody holds the claim to release |
| 409 | ``session_closed`` / ``session_busy`` / ``interrupt_not_ready`` | the session cannot take it now |
| 409 | ``session_waiting`` | a start's ``correlation_key`` has an open session and the workflow rejects new |
|  |  | input then (``on_arrival="reject"``; ``session_id``, ``pending``) |
| 409 | ``workflow_unavailable`` / ``version_mismatch`` | the workflow cannot resume it |
| 409 | ``idempotency_in_flight`` | the same key is being processed right now |
| 409 | ``review_decided`` / ``review_cancelled`` / ``review_superseded`` | the review is not pending (``by``, ``at``) |
| 413 | ``body_too_large`` | the body is over Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MiB); nothing was read |
| 422 | ``idempotency_key_reused`` | the key was used for a different request |
| 409 | ``busy`` | a row lock or a deadlock made the write give up; nothing was stored (retry) |
| 503 | ``database_unavailable`` | the database cannot be reached right now; nothing was stored (retry) |
| 500 | ``internal_error`` | a bug; the details go to the server log, never to the caller |

Retryable conflicts (``session_busy``, ``interrupt_not_ready``) carry ``Retry-After: 1``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from engine import EngineError

from ..inbox.errors import DecisionError, InboxConflict
from ..json_errors import error_body, error_response
from ..unavailable import MESSAGES as DATABASE_REFUSALS
from ..unavailable import classify
from ..workflow_sessions.arrivals import SessionWaitingError
from ..workflows import UnknownWorkflowError
from .auth import refusal_message

logger = logging.getLogger("reviewconsole.api")

__all__ = ["ApiError", "install_handlers", "unknown_path"]

_ENGINE_STATUS = {
    "interrupt_ambiguous": 400,
    "answer_invalid": 400,
    "answer_missing": 400,
    "data_invalid": 400,
    "session_not_found": 404,
    "interrupt_unknown": 409,
    "interrupt_decided": 409,
    "interrupt_not_ready": 409,
    "session_busy": 409,
    "session_conflict": 409,
    "session_closed": 409,
    "version_mismatch": 409,
}


_DETAILS = frozenset(
    {"errors", "pending", "interrupt_id", "decided_by", "decided_at", "decision", "status", "session_id", "given"}
)
"""The engine error details an API refusal carries (never ``args_changed``'s ``expected``: a
client names the digest it was shown, never one copied back from an error)."""


class ApiError(Exception):
    """A refusal with an HTTP ``status``, a stable ``code``, a ``message`` and JSON ``details``."""

    def __init__(self, status: int, code: str, message: str, /, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details

    def body(self) -> dict[str, Any]:
        return error_body(self.code, self.message, **self.details)


def error_for(exc: BaseException) -> ApiError | None:
    """The API error for a domain exception, or None when it is not one (a bug)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, EngineError):
        status = _ENGINE_STATUS.get(exc.code, 409)
        details = {k: v for k, v in exc.details.items() if k in _DETAILS}
        return ApiError(status, exc.code, exc.message, **details)
    if isinstance(exc, SessionWaitingError):
        return ApiError(409, exc.code, exc.message, **exc.details)
    if isinstance(exc, InboxConflict):  # the inbox's 409s (claimed, moved, expired, superseded, not_claimed)
        return ApiError(409, f"interrupt_{exc.code}", exc.message, **exc.details)
    if isinstance(exc, DecisionError):
        return ApiError(400, exc.code, exc.message, **({"errors": exc.errors} if exc.errors else {}), **exc.details)
    if isinstance(exc, RequestDataTooBig):  # raised by the first read of request.body
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return ApiError(413, "body_too_large", f"The body exceeds {limit} bytes.", max_bytes=limit)
    if isinstance(exc, UnknownWorkflowError):
        return ApiError(409, "workflow_unavailable", "The session's workflow is not available any more.")
    kind = classify(exc)
    if kind is not None:
        status, _, message = DATABASE_REFUSALS[kind]
        return ApiError(status, kind, message)
    return None


def _respond(api: NinjaAPI, request: HttpRequest, error: ApiError) -> HttpResponse:
    response = api.create_response(request, error.body(), status=error.status)
    if error.code in ("session_busy", "interrupt_not_ready", "session_conflict", "idempotency_in_flight", "busy"):
        response["Retry-After"] = "1"
    elif error.code == "database_unavailable":
        response["Retry-After"] = "5"
    if error.status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response


def _path(loc: tuple[Any, ...] | list[Any]) -> list[str]:
    """Where an error is: in the JSON body, its keys from the body's root (ninja's ``loc`` is
    ``("body", <parameter>, …)``); else the location and the name (``["query", "wait"]``)."""
    parts = [str(p) for p in loc]
    return parts[2:] if parts[:1] == ["body"] else parts


def _validation_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"path": _path(e.get("loc", ())), "message": str(e.get("msg", ""))} for e in errors[:50]]


def install_handlers(api: NinjaAPI) -> None:
    """Map every exception a view may raise to the error format above."""

    def domain(request: HttpRequest, exc: Exception) -> HttpResponse:
        error = error_for(exc)
        if error is None:
            logger.exception("API request %s %s failed", request.method, request.path, exc_info=exc)
            error = ApiError(500, "internal_error", "Something went wrong on our side; it has been logged.")
        return _respond(api, request, error)

    def validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        errors = _validation_errors(exc.errors)
        message = "The request is not valid."
        if any(e.get("type") == "missing" and len(e.get("loc", ())) == 2 and e["loc"][0] == "body" for e in exc.errors):
            message = "The request has no JSON body: send a JSON object (`{}` when every field is left out)."
        return _respond(api, request, ApiError(400, "invalid_request", message, errors=errors))

    def auth(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        return _respond(api, request, ApiError(401, "unauthorized", refusal_message(request)))

    def http(request: HttpRequest, exc: HttpError) -> HttpResponse:
        code = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed", 429: "rate_limited"}.get(
            exc.status_code, "refused"
        )
        return _respond(api, request, ApiError(exc.status_code, code, str(exc)))

    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return _respond(api, request, ApiError(404, "not_found", "Not found."))

    api.add_exception_handler(Exception, domain)
    api.add_exception_handler(ValidationError, validation)
    api.add_exception_handler(AuthenticationError, auth)
    api.add_exception_handler(HttpError, http)
    api.add_exception_handler(Http404, not_found)


@csrf_exempt  # nothing is done: a POST without a CSRF token gets the same 404 as any other
def unknown_path(request: HttpRequest, path: str) -> HttpResponse:
    """``404 not_found`` in the one error format for a URL under ``/api/v1/`` that no operation has.

    Routed after the API's own URLs (``reviewconsole/urls.py``): django-ninja's ``Http404``
    handler only sees a 404 raised inside an operation, never a URL Django could not resolve.
    """
    return error_response(404, "not_found", "No such API endpoint; see /api/v1/docs.")
