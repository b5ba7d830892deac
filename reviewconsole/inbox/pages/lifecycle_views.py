"""The item page's lifecycle actions and comments: defer, return to queue, escalate, cancel, comment.

Each is a POST form on the item's page (CSRF), or JSON with ``Accept: application/json``, and
calls one service of ``inbox/items/lifecycle.py`` / ``comments.py`` as the logged-in person; the
service checks who may (reviewers of the item's queue defer, return, escalate and comment;
managers cancel). An item outside the user's queues is a 404 (``item_for``), a refusal is the
item's page again with the reason (``view_helpers.refusal``: 400, 403, 409), as for a decision.

- ``POST /inbox/items/<pk>/defer/``: ``note``, ``due_at`` (``YYYY-MM-DDTHH:MM`` in the person's time zone, as the form's
  ``datetime-local`` sends it; an ISO 8601 time with an offset is taken as is);
- ``POST /inbox/items/<pk>/release/``: ``note``;
- ``POST /inbox/items/<pk>/escalate/``: ``note``, ``to_queue`` (a slug among the allowed; empty: the first);
- ``POST /inbox/items/<pk>/cancel/``: ``reason``, ``scope`` (``item``, default, or ``session``);
- ``POST /inbox/items/<pk>/comment/``: ``text``.
"""

from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from ...preferences.times import absolute
from ..errors import DecisionError
from ..items.comments import comment_add, comment_json
from ..items.lifecycle import Actor, interrupt_cancel, interrupt_defer, interrupt_escalate, interrupt_release
from ..items.selectors import item_for, queues_for
from ..items.serializers import list_entry
from ..models import Item
from ..pictures.serving import allow_picture_styles
from .item_views import REFUSALS, check_posted
from .view_helpers import json_404, refusal, wants_json

__all__ = ["cancel", "comment", "defer", "escalate", "release"]


def parse_due(text: str) -> dt.datetime:
    """The due time a defer form sent: ``datetime-local`` text read in the person's time zone (the
    one active for the request), or ISO 8601 with an offset.

    Raises:
        DecisionError: empty or not a date and time.
    """
    try:
        value = parse_datetime(text.strip()) if text.strip() else None
    except ValueError:
        value = None
    if value is None:
        raise DecisionError("Give the new due time as a date and time.")
    return value if value.tzinfo is not None else timezone.make_aware(value)


def _done(request: HttpRequest, item: Item, note: str) -> HttpResponse:
    """The answer to an action that succeeded: JSON, the item's page, or the inbox when the user
    may no longer see the item (escalated to a queue they do not review)."""
    item.refresh_from_db()
    if wants_json(request):
        return JsonResponse({"item": list_entry(item)})
    messages.success(request, note)
    if not queues_for(request.user).filter(pk=item.queue_id).exists():
        return redirect("inbox:index")
    return redirect("inbox:detail", pk=item.pk)


@login_required
@json_404
@require_POST
@allow_picture_styles
def defer(request: HttpRequest, pk: int) -> HttpResponse:
    """Put the item back in its queue, unclaimed, with a note and a new due time."""
    item = item_for(request.user, pk)
    try:
        check_posted(request)
        until = parse_due(request.POST.get("due_at", ""))
        item = interrupt_defer(
            interrupt=item,
            actor=Actor.person(request.user),
            until=until,
            note=request.POST.get("note", ""),
            request=request,
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    return _done(request, item, f"Deferred until {absolute(until)}.")


@login_required
@json_404
@require_POST
@allow_picture_styles
def release(request: HttpRequest, pk: int) -> HttpResponse:
    """Return the claimed item to its queue with a note for whoever takes it next."""
    item = item_for(request.user, pk)
    try:
        check_posted(request)
        item = interrupt_release(
            interrupt=item, actor=Actor.person(request.user), note=request.POST.get("note", ""), request=request
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    return _done(request, item, "Returned to the queue with your note.")


@login_required
@json_404
@require_POST
@allow_picture_styles
def escalate(request: HttpRequest, pk: int) -> HttpResponse:
    """Move the item to a queue its workflow allows, with a note."""
    item = item_for(request.user, pk)
    try:
        check_posted(request)
        item = interrupt_escalate(
            interrupt=item,
            actor=Actor.person(request.user),
            note=request.POST.get("note", ""),
            to_queue=request.POST.get("to_queue", "").strip(),
            request=request,
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    return _done(request, item, f"Escalated to {item.queue.name}.")


@login_required
@json_404
@require_POST
@allow_picture_styles
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """A queue manager cancels the item (the workflow gets a cancelled answer) or its whole session.
    A ``scope`` other than ``item`` or ``session`` is refused (400), nothing cancelled: a mistyped
    ``session`` must not cancel the item alone."""
    item = item_for(request.user, pk)
    scope = request.POST.get("scope", "item")
    whole = scope == "session"
    try:
        check_posted(request)
        if scope not in ("item", "session"):
            raise DecisionError("Choose what to cancel: the request (item) or the whole session (session).")
        item = interrupt_cancel(
            interrupt=item,
            actor=Actor.person(request.user),
            reason=request.POST.get("reason", ""),
            whole_session=whole,
            request=request,
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    return _done(request, item, "The session was cancelled." if whole else "The request was cancelled.")


@login_required
@json_404
@require_POST
@allow_picture_styles
def comment(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a comment (a hand-off note) to the item."""
    item = item_for(request.user, pk)
    try:
        check_posted(request)
        added = comment_add(
            interrupt=item, actor=Actor.person(request.user), text=request.POST.get("text", ""), request=request
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    if wants_json(request):
        return JsonResponse({"comment": comment_json(added)}, status=201)
    messages.success(request, "Comment added.")
    return redirect("inbox:detail", pk=item.pk)
