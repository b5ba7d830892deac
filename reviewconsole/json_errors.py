"""The one JSON error format of every door (webhooks, the inbox's JSON, the console's JSON, the API, AG-UI).

Every refusal answered as JSON is ``{"error": {"code": str, "message": str, ...details}}``: a
stable, machine-readable ``code`` (snake_case), a ``message`` for people (never exception text or
internals) and any details the code documents (``errors``, ``max_bytes``, ``decided_by``, …).
The codes per door are listed in ``docs/errors.md``. Status codes and ``Retry-After`` headers
are each door's; this module only builds the body (and, for plain Django views, the response).

AG-UI's RUN_ERROR events inside an event stream keep AG-UI's own shape (``code``, ``message``):
that is the protocol's; only AG-UI's refusals before the stream starts use this format.
"""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse

__all__ = ["error_body", "error_response"]


def error_body(code: str, message: str, /, **details: Any) -> dict[str, Any]:
    """``{"error": {"code": code, "message": message, **details}}``.

    Raises:
        ValueError: a detail is named ``code`` or ``message`` (it would replace them).
    """
    if "code" in details or "message" in details:
        raise ValueError("error details may not be named 'code' or 'message'")
    return {"error": {"code": code, "message": message, **details}}


def error_response(
    status: int, code: str, message: str, /, *, retry_after: int | None = None, **details: Any
) -> JsonResponse:
    """A ``JsonResponse`` of :func:`error_body` with ``status`` (4xx/5xx) and, when given,
    ``Retry-After: <retry_after>`` (seconds)."""
    response = JsonResponse(error_body(code, message, **details), status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response
