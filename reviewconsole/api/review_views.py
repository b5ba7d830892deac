"""The review-request operations (``/api/v1/reviews``, docs/reviews.md): ask, read (and long-poll), cancel.

Each authenticates (``request.auth`` is the :class:`ApiClient`) and calls ``reviews.py``; writes
take an ``Idempotency-Key`` (``idempotency.py``); refusals are raised and mapped in ``errors.py``.
The read is an async view: ``?wait=N`` is held on the event loop (``review_wait.py``); under
Daphne the view answers at once and :class:`~.review_poll.ReviewLongPoll` holds its answer
outside Django (the request's scope carries its :data:`~.review_poll.HOLD`).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from ninja import Router

from .idempotency import idempotent, request_hash
from .review_poll import HOLD
from .review_wait import review_answer, review_settled, wait_seconds
from .reviews import review_ask, review_cancel, review_json
from .schemas import CancelIn, ReviewIn, ReviewOut
from .views import ERRORS, KEY, replayable

router = Router(tags=["reviews"])


def _base(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


@router.post("/reviews", response={201: ReviewOut, **ERRORS}, summary="Ask for a review")
def ask(request: HttpRequest, response: HttpResponse, body: ReviewIn, idempotency_key: str | None = KEY) -> Any:
    """File a review in ``queue``: a reviewer decides it in the inbox (201 with the review).

    ``response_schema`` is checked against the JSON Schema metaschema and must be drawable as a
    form (400 ``schema_invalid``: a ``$ref`` elsewhere or to itself, too many fields);
    ``queue`` must be in the token's scope (403 ``queue_forbidden``) and exist (400 ``queue_unknown``).
    """
    client = request.auth  # type: ignore[attr-defined]

    def action() -> tuple[int, dict[str, Any]]:
        review = review_ask(client=client, body=body.model_dump(), request=request, base_url=_base(request))
        return 201, review_json(review, _base(request))

    digest = request_hash("POST", request.path, body.model_dump())
    return replayable(response, idempotent(client=client, key=idempotency_key, digest=digest, action=action))


@router.get(
    "/reviews/{review_id}", response={200: ReviewOut, **ERRORS}, summary="Read a review", url_name="review_read"
)
async def read(request: HttpRequest, review_id: str, wait: str | None = None) -> Any:
    """The review; with ``wait`` (seconds, 0 to 60: digits with an optional decimal fraction, e.g.
    ``30`` or ``2.5``) answered once it is no longer ``pending`` or ``wait`` seconds have passed
    (then still ``pending``). Any other ``wait`` (a sign, an exponent, ``nan``, blanks, over 60) is
    400 ``wait_invalid``."""
    seconds = wait_seconds(wait) if wait is not None else None
    client = request.auth  # type: ignore[attr-defined]
    hold = getattr(request, "scope", {}).get(HOLD)
    if seconds and hold is None:  # served by Django alone: wait here
        body = await review_settled(client, review_id, seconds, _base(request))
        return HttpResponse(body, content_type="application/json; charset=utf-8")
    body, status = await sync_to_async(review_answer)(client, review_id, _base(request))
    if seconds and hold is not None and status == "pending":  # ReviewLongPoll holds this answer
        hold.update(client=client, review_id=review_id, seconds=seconds, base_url=_base(request))
    return HttpResponse(body, content_type="application/json; charset=utf-8")


@router.post("/reviews/{review_id}/cancel", response={200: ReviewOut, **ERRORS}, summary="Cancel a review")
def cancel(
    request: HttpRequest, response: HttpResponse, review_id: str, body: CancelIn, idempotency_key: str | None = KEY
) -> Any:
    """Cancel a pending review: it leaves the inbox; 409 when it was decided, cancelled or superseded."""
    client = request.auth  # type: ignore[attr-defined]

    def action() -> tuple[int, dict[str, Any]]:
        review = review_cancel(client=client, review_id=review_id, reason=body.reason, request=request)
        return 200, review_json(review, _base(request))

    digest = request_hash("POST", request.path, body.model_dump())
    return replayable(response, idempotent(client=client, key=idempotency_key, digest=digest, action=action))
