"""What API clients do to reviews: ask for one, cancel it; and a review as JSON (docs/reviews.md).

A review is a session of the built-in ``review`` workflow (``workflows/review.py``) plus its
:class:`~.models.Review` row, written in the caller's transaction (the idempotency record commits
with them). Everything is checked before anything is stored: the JSON Schema against its
metaschema (``jsonschema``), the queue (it exists, the token is scoped to it), the kind, the
callback's address, the review revised. The decision is the session interrupt's, read by
:func:`review_json` (who, when, action, answer, edits), so the inbox, the API's resume, expiry and
this module's JSON agree.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from ..audit.services import audit_record
from ..inbox.items.lifecycle import pending_item_ids, session_items_cancelled
from ..inbox.models import CANCELLED, Item
from ..inbox.pages.drafts import edit_diff
from ..workflow_sessions.models import Interrupt, InterruptStatus, WorkflowSession
from ..workflow_sessions.outcome import cancel_reason
from ..workflow_sessions.services import session_cancel_sync, session_start
from ..workflows import review as review_workflow
from .errors import ApiError
from .models import ApiClient, Review
from .review_checks import check_callback, check_kind, check_queue, check_schema

__all__ = [
    "review_ask",
    "review_cancel",
    "review_cancellation",
    "review_for",
    "review_interrupt",
    "review_item",
    "review_json",
    "review_refusal",
    "review_status",
]


def _actor(client: ApiClient) -> str:
    return f"client:{client.name}"


def review_for(client: ApiClient, review_id: str, *, lock: bool = False) -> Review:
    """The client's own review ``review_id``.

    Raises:
        ApiError: 404 ``review_unknown`` (also another client's review: never say it exists).
    """
    rows = Review.objects.select_related("session", "client", "revision_of")
    if lock:
        rows = rows.select_for_update(of=("self",))  # not the joined rows (PostgreSQL refuses a nullable side)
    found = rows.filter(pk=review_id, client=client).first()
    if found is None:
        raise ApiError(404, "review_unknown", "No such review.")
    return found


def review_interrupt(review: Review) -> Interrupt | None:
    """The session interrupt that asks ``review`` (its wire id is the review's id), or None before the run asked."""
    return Interrupt.objects.newest(review.session_id, review.pk)


def review_item(review: Review) -> Item | None:
    """The inbox item of ``review`` (the latest, a Retry asks again), or None before the run asked."""
    return Item.objects.filter(session_id=review.session_id, interrupt_id=review.pk).order_by("-pk").first()


def review_cancellation(review: Review, asked: Interrupt | None, item: Item | None) -> dict[str, Any]:
    """Who cancelled ``review``, when and why: ``{"by", "at", "reason"}``.

    Its own client (``POST …/cancel``: ``client:<name>``), or a queue manager in the inbox, who
    either answered it with the cancelled answer (``asked.decision == "cancelled"``) or cancelled
    its whole session (the item's ``decision`` says who); else ``system`` (the session failed).
    """
    if review.cancelled_at is not None:
        return {
            "by": review.cancelled_by or "system",
            "at": _iso(review.cancelled_at),
            "reason": review.cancel_reason or None,
        }
    if asked is not None and asked.status == InterruptStatus.RESOLVED and asked.decision == CANCELLED:
        who, at, reason = asked.decided_by_label, asked.decided_at, asked.reason
    elif item is not None and item.decision == CANCELLED:
        who, at, reason = item.decided_by_label, item.decided_at, item.reason
    else:
        who, at, reason = "", None, ""
    return {"by": who or "system", "at": _iso(at or review.session.updated_at), "reason": reason or None}


def review_refusal(review: Review) -> ApiError | None:
    """The 409 for acting on ``review`` (cancel, revise) when it is no longer pending, or None:
    ``review_decided`` (also expired: decided by ``system (expired)``), ``review_superseded`` or
    ``review_cancelled``, naming who (``by``) and when (``at``)."""
    asked, item = review_interrupt(review), review_item(review)
    status = review_status(review, asked, item)
    if status in ("decided", "expired") and asked is not None:
        at = _iso(asked.decided_at)
        by = asked.decided_by_label or None
        return ApiError(
            409, "review_decided", f"This review was already decided by {by or 'someone'} at {at}.", by=by, at=at
        )
    if status == "superseded":
        newer = Review.objects.filter(revision_of=review).first()
        at = _iso(newer.created_at) if newer is not None else None
        return ApiError(
            409,
            "review_superseded",
            f"This review was superseded by {newer.pk if newer else 'a newer one'} at {at}.",
            by=_actor(review.client),
            at=at,
            superseded_by=newer.pk if newer is not None else None,
        )
    if status == "cancelled":
        cancelled = review_cancellation(review, asked, item)
        by, at = cancelled["by"], cancelled["at"]
        return ApiError(409, "review_cancelled", f"This review was already cancelled by {by} at {at}.", by=by, at=at)
    return None


def review_ask(*, client: ApiClient, body: dict[str, Any], request: HttpRequest, base_url: str = "") -> Review:
    """Ask for a review: check ``body`` (``ReviewIn`` as a dict), start its session, store it.

    Raises:
        ApiError: 400 ``schema_invalid`` / ``queue_unknown`` / ``callback_invalid`` /
            ``invalid_request``, 403 ``queue_forbidden``, 404 ``review_unknown`` (``revision_of``),
            409 ``review_superseded`` (``revision_of`` was revised already).
        engine.SessionBusyError: the review revised is being run right now (409, retry).
    """
    kind = check_kind(body)
    if body.get("response_schema") is not None:
        check_schema(body["response_schema"])
    check_queue(client, body["queue"])
    if body.get("callback_url"):
        check_callback(body["callback_url"])
    older = review_for(client, body["revision_of"], lock=True) if body.get("revision_of") else None
    if older is not None and Review.objects.filter(revision_of=older).exists():
        raise review_refusal(older) or ApiError(409, "review_superseded", "This review was revised already.")
    review = Review(
        client=client,
        title=body["title"],
        message=body["message"],
        queue=body["queue"],
        kind=kind,
        payload=body.get("payload"),
        response_schema=body.get("response_schema") if kind == "form" else None,
        metadata=body.get("metadata") or {},
        due_in_seconds=body.get("due_in_seconds"),
        on_expiry=body.get("on_expiry") or "",
        callback_url=body.get("callback_url") or "",
        base_url=base_url,
        revision_of=older,
    )
    data = {
        "title": review.title,
        "review_id": review.pk,
        "message": review.message,
        "queue": review.queue,
        "kind": kind,
        "payload": review.payload,
        "response_schema": review.response_schema,
        "due_in_seconds": review.due_in_seconds,
        "on_expiry": review.on_expiry,
        "revision_of": {"review": older.pk, "session": older.session_id} if older is not None else None,
    }
    older_pending = older is not None and review_refusal(older) is None
    with transaction.atomic():
        review.session = session_start(
            workflow=review_workflow.NAME,
            data=data,
            user_id=_actor(client),
            metadata={"api_client": client.name, "review_id": review.pk},
        )
        review.save(force_insert=True)
        if older is not None and older_pending:
            session_cancel_sync(older.session_id, reason=f"Superseded by {review.pk}.")
        audit_record(
            action="review.ask",
            actor=_actor(client),
            target=review.session,
            request=request,
            detail={"review": review.pk, "queue": review.queue, "kind": kind, "revision_of": data["revision_of"]},
        )
    return review


def review_cancel(*, client: ApiClient, review_id: str, reason: str, request: HttpRequest) -> Review:
    """Cancel the client's pending review: its session is cancelled, its item leaves the inbox
    marked cancelled by ``client:<name>`` with ``reason`` (a reviewer deciding it then gets 409
    ``cancelled`` saying so).

    Raises:
        ApiError: 404 ``review_unknown``; 409 ``review_decided`` / ``review_cancelled`` /
            ``review_superseded`` naming who and when (``by``, ``at``).
        engine.SessionBusyError: a run holds the session right now (409, retry).
    """
    with transaction.atomic():
        review = review_for(client, review_id, lock=True)
        WorkflowSession.objects.select_for_update().filter(pk=review.session_id).first()  # answers wait for us
        refusal = review_refusal(review)
        if refusal is not None:
            raise refusal
        pending = pending_item_ids(review.session_id)
        session_cancel_sync(review.session_id, reason=cancel_reason(_actor(client), reason))
        session_items_cancelled(pending, by=_actor(client), reason=reason)  # "cancelled by client:<name>"
        now = timezone.now()
        Review.objects.filter(pk=review.pk).update(
            cancelled_at=now, cancelled_by=_actor(client), cancel_reason=reason[:500]
        )
        audit_record(
            action="review.cancel",
            actor=_actor(client),
            target=review.session,
            request=request,
            detail={"review": review.pk, "reason": reason},
        )
    review.refresh_from_db()
    return review


def review_status(review: Review, asked: Interrupt | None, item: Item | None) -> str:
    """``pending``, ``decided``, ``expired`` (timed out), ``cancelled`` or ``superseded``.

    ``asked`` and ``item``: the review's session interrupt and inbox item (or None). A request a
    queue manager cancelled in the inbox (answered with the cancelled answer, or its whole session
    cancelled) is ``cancelled``, as is one its client cancelled; a decided or cancelled review keeps
    its status when revised later (it gets ``superseded_by``).
    """
    if asked is not None and asked.status == InterruptStatus.RESOLVED:
        return {"timeout": "expired", CANCELLED: "cancelled"}.get(asked.decision, "decided")
    if review.cancelled_at is not None or (item is not None and item.decision == CANCELLED):
        return "cancelled"
    if Review.objects.filter(revision_of=review).exists():
        return "superseded"
    if review.session.status in ("cancelled", "failed"):
        return "cancelled"
    if asked is not None and asked.status == InterruptStatus.CANCELLED:
        return "cancelled"
    return "pending"


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _decision(review: Review, asked: Interrupt) -> dict[str, Any]:
    """The stored decision in the review's terms (docs/reviews.md, "The review JSON")."""
    response = asked.response
    value = response.get("result") if isinstance(response, dict) and "result" in response else response
    action = asked.decision or "answer"
    answer: Any = None
    feedback = None
    edits = None
    if action == "answer":
        answer = value
    elif action == "revise":
        feedback = value if isinstance(value, str) else None
    elif action == "approve" and review.kind == "draft":
        original = review.payload.get("draft", "") if isinstance(review.payload, dict) else ""
        edited = response.get("draft") if isinstance(response, dict) else None
        answer = edited if isinstance(edited, str) else original
        if isinstance(edited, str):
            edits = {"draft": edited, "diff": edit_diff(original, edited)}
    return {
        "action": action,
        "answer": answer,
        "reason": asked.reason or None,
        "feedback": feedback,
        "edits": edits,
        "by": asked.decided_by_label or None,
        "at": _iso(asked.decided_at),
    }


def review_json(review: Review, base_url: str | None = None) -> dict[str, Any]:
    """The review as the API and the ``review.decided`` event show it (docs/reviews.md).

    ``base_url``: ``scheme://host`` for the absolute ``url`` and ``inbox_url`` (None: the one it
    was asked on).
    ``inbox_url`` is None until the reviewer's item exists (the run that asks follows the 201).
    """
    base_url = review.base_url if base_url is None else base_url
    asked = review_interrupt(review)
    item = review_item(review)
    status = review_status(review, asked, item)
    newer = Review.objects.filter(revision_of=review).values_list("pk", flat=True).first()
    due_at = item.due_at if item is not None else None
    if item is None and review.due_in_seconds:
        due_at = review.created_at + dt.timedelta(seconds=review.due_in_seconds)
    cancelled = review_cancellation(review, asked, item) if status == "cancelled" else None
    return {
        "id": review.pk,
        "status": status,
        "title": review.title,
        "message": review.message,
        "queue": review.queue,
        "kind": review.kind,
        "payload": review.payload,
        "response_schema": review.response_schema,
        "metadata": review.metadata,
        "created_at": _iso(review.created_at),
        "due_at": _iso(due_at),
        "revision_of": review.revision_of_id,
        "superseded_by": newer,
        "url": f"{base_url}/api/v1/reviews/{review.pk}",
        "inbox_url": f"{base_url}/inbox/items/{item.pk}/" if item is not None else None,
        "session_id": review.session_id,
        "decision": _decision(review, asked) if asked is not None and status in ("decided", "expired") else None,
        "cancelled": cancelled,
    }
