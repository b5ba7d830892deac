"""The review lifecycle in the API: defer, release, escalate, cancel and comment on an interrupt.

``POST /api/v1/sessions/{session_id}/interrupts/{interrupt_id}/defer | release | escalate | cancel |
comments`` and ``GET …/comments``. The interrupt is named as ``/resume`` names it: the session
(through the client's scope first: ``selectors.session_for``) and the interrupt's wire id; the
session's pending request with that id is acted on (404 ``interrupt_unknown`` when there is none,
409 ``interrupt_decided`` naming who when it was decided or cancelled; ``comments`` also takes a
decided one). A cancel's answer shows the decision its transaction stored. Each calls the inbox's service
(``inbox/items/lifecycle.py``, ``comments.py``) as the client (``client:<name>``; audited so), which
acts on a request a reviewer has claimed only with the ``override_claims`` scope (409
``interrupt_claimed`` otherwise). Refusals are the API's errors (``errors.py``): the inbox's 409s
as ``interrupt_claimed``, ``interrupt_moved``, ``interrupt_expired``, ``interrupt_superseded``,
``interrupt_not_claimed``; ``interrupt_decided`` naming who decided first. Writes take an optional
``Idempotency-Key``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router, Status

from ..inbox.items.comments import comment_add, comment_json, comments_for
from ..inbox.items.lifecycle import (
    Actor,
    interrupt_cancel,
    interrupt_defer,
    interrupt_escalate,
    interrupt_release,
)
from ..inbox.items.serializers import item_json
from ..inbox.models import Comment, Item, ItemStatus
from ..workflow_sessions.models import Interrupt as SessionInterrupt
from ..workflow_sessions.models import InterruptStatus
from .errors import ApiError
from .idempotency import idempotent, request_hash
from .lifecycle_schemas import (
    CommentIn,
    CommentOut,
    CommentsOut,
    DeferIn,
    EscalateIn,
    InterruptCancelIn,
    LifecycleOut,
    ReleaseIn,
)
from .models import ApiClient
from .selectors import session_for
from .views import ERRORS, KEY, replayable

router = Router(tags=["interrupts"])

PATH = "/sessions/{session_id}/interrupts/{interrupt_id}"


def _item(client: ApiClient, session_id: str, interrupt_id: str, *, pending: bool = True) -> Item:
    """The session's (pending) request ``interrupt_id``, through the client's scope.

    Raises:
        ApiError: 404 ``session_not_found`` (none, or out of scope); 404 ``interrupt_unknown``.
    """
    session = session_for(client, session_id)
    rows = Item.objects.filter(session=session, interrupt_id=interrupt_id).select_related(
        "queue", "session", "claimed_by"
    )
    if pending:
        rows = rows.filter(status=ItemStatus.PENDING)
    found = rows.order_by("-id").first()
    if found is None:
        decided = SessionInterrupt.objects.newest(session.pk, interrupt_id)
        if pending and decided is not None and decided.status != InterruptStatus.PENDING:
            raise ApiError(
                409,
                "interrupt_decided",
                f"This interrupt was already {decided.decision or decided.status} by "
                f"{decided.decided_by_label or 'the console'}; nothing was recorded.",
                decided_by=decided.decided_by_label or None,
                decided_at=decided.decided_at.isoformat() if decided.decided_at else None,
            )
        raise ApiError(404, "interrupt_unknown", "No such pending interrupt in this session.")
    return found


def _actor(client: ApiClient) -> Actor:
    return Actor.client(f"client:{client.name}", override_claims=client.may_override_claims)


def _answer(row: Item, comment: Comment | None = None) -> tuple[int, dict[str, Any]]:
    """The request as it stands now: the item, with its decision read from the session's interrupt,
    which the cancel's own transaction wrote (the item follows once the outbox is relayed)."""
    row = Item.objects.select_related("queue", "session", "claimed_by", "session_interrupt").get(pk=row.pk)
    data = item_json(row)
    asked = row.session_interrupt
    if asked is not None and asked.status != InterruptStatus.PENDING and data.get("status") == ItemStatus.PENDING:
        data.update(
            status=asked.status,
            decision=asked.decision,
            decided_by=asked.decided_by_label or None,
            decided_at=asked.decided_at.isoformat() if asked.decided_at else None,
            reason=asked.reason or None,
        )
    return 200, {"interrupt": data, "comment": comment_json(comment) if comment is not None else None}


def _run(request: HttpRequest, response: HttpResponse, body: Any, key: str | None, act: Callable[[], Any]) -> Any:
    client = request.auth  # type: ignore[attr-defined]
    digest = request_hash("POST", request.path, body.model_dump(mode="json"))
    return replayable(response, idempotent(client=client, key=key, digest=digest, action=act))


def _last_comment(row: Item) -> Comment | None:
    return comments_for(row).last()


@router.post(f"{PATH}/defer", response={200: LifecycleOut, **ERRORS}, summary="Defer an interrupt")
def defer(
    request: HttpRequest,
    response: HttpResponse,
    session_id: str,
    interrupt_id: str,
    body: DeferIn,
    idempotency_key: str | None = KEY,
) -> Any:
    """Put the request back in its queue, unclaimed, due again at ``due_at``, with ``note``.

    400 ``invalid`` when ``due_at`` is not in the future (or more than 90 days ahead)."""
    client = request.auth  # type: ignore[attr-defined]
    row = _item(client, session_id, interrupt_id)

    def act() -> tuple[int, dict[str, Any]]:
        done = interrupt_defer(interrupt=row, actor=_actor(client), until=body.due_at, note=body.note, request=request)
        return _answer(done, _last_comment(done))

    return _run(request, response, body, idempotency_key, act)


@router.post(f"{PATH}/release", response={200: LifecycleOut, **ERRORS}, summary="Return an interrupt to its queue")
def release(
    request: HttpRequest,
    response: HttpResponse,
    session_id: str,
    interrupt_id: str,
    body: ReleaseIn,
    idempotency_key: str | None = KEY,
) -> Any:
    """Release the reviewer's claim with ``note`` (needs the ``override_claims`` scope: the claim is
    a reviewer's); 409 ``interrupt_not_claimed`` when nobody holds it."""
    client = request.auth  # type: ignore[attr-defined]
    row = _item(client, session_id, interrupt_id)

    def act() -> tuple[int, dict[str, Any]]:
        done = interrupt_release(interrupt=row, actor=_actor(client), note=body.note, request=request)
        return _answer(done, _last_comment(done))

    return _run(request, response, body, idempotency_key, act)


@router.post(f"{PATH}/escalate", response={200: LifecycleOut, **ERRORS}, summary="Escalate an interrupt")
def escalate(
    request: HttpRequest,
    response: HttpResponse,
    session_id: str,
    interrupt_id: str,
    body: EscalateIn,
    idempotency_key: str | None = KEY,
) -> Any:
    """Move the request to ``queue`` (one of the queues its workflow allows; none: the first of
    them), unclaimed, with ``note``; 400 ``invalid`` with ``allowed`` (their slugs) otherwise."""
    client = request.auth  # type: ignore[attr-defined]
    row = _item(client, session_id, interrupt_id)

    def act() -> tuple[int, dict[str, Any]]:
        done = interrupt_escalate(
            interrupt=row, actor=_actor(client), note=body.note, to_queue=body.queue or "", request=request
        )
        return _answer(done, _last_comment(done))

    return _run(request, response, body, idempotency_key, act)


@router.post(f"{PATH}/cancel", response={200: LifecycleOut, **ERRORS}, summary="Cancel an interrupt")
def cancel(
    request: HttpRequest,
    response: HttpResponse,
    session_id: str,
    interrupt_id: str,
    body: InterruptCancelIn,
    idempotency_key: str | None = KEY,
) -> Any:
    """Cancel the request with ``reason``: the workflow receives the cancelled answer
    (``{"cancelled": true, "reason": …}``; ``{"confirmed": false, "cancelled": true, …}`` for a tool
    confirmation, ``{"status": "cancelled", …}`` for a long-running tool), recorded as the decision
    ``cancelled``, and its run is queued; with ``whole_session`` the session is cancelled. 409
    ``interrupt_decided`` (who and when) when someone answered first."""
    client = request.auth  # type: ignore[attr-defined]
    row = _item(client, session_id, interrupt_id)

    def act() -> tuple[int, dict[str, Any]]:
        done = interrupt_cancel(
            interrupt=row, actor=_actor(client), reason=body.reason, whole_session=body.whole_session, request=request
        )
        return _answer(done, _last_comment(done))

    return _run(request, response, body, idempotency_key, act)


@router.post(f"{PATH}/comments", response={201: CommentOut, **ERRORS}, summary="Comment on an interrupt")
def comment(
    request: HttpRequest,
    response: HttpResponse,
    session_id: str,
    interrupt_id: str,
    body: CommentIn,
    idempotency_key: str | None = KEY,
) -> Any:
    """Add a note to the request (pending or decided) for reviewers; it shows on its page and in the timeline."""
    client = request.auth  # type: ignore[attr-defined]
    row = _item(client, session_id, interrupt_id, pending=False)

    def act() -> tuple[int, dict[str, Any]]:
        added = comment_add(interrupt=row, text=body.text, actor=_actor(client), request=request)
        return 201, comment_json(added)

    return _run(request, response, body, idempotency_key, act)


@router.get(f"{PATH}/comments", response={200: CommentsOut, **ERRORS}, summary="List an interrupt's comments")
def comments(request: HttpRequest, session_id: str, interrupt_id: str) -> Any:
    """The request's comments and lifecycle notes, oldest first."""
    row = _item(request.auth, session_id, interrupt_id, pending=False)  # type: ignore[attr-defined]
    return Status(200, {"comments": [comment_json(c) for c in comments_for(row)]})
