"""After feedback: the page that waits for the session's next request (the new draft) and opens it.

A reviewer who sends feedback (``revise``) on an item is sent to
``/inbox/items/<pk>/after-feedback/``. The page is in one of three states (``data-state``, and
``state`` in ``next.json``):

- ``waiting``: the next draft is being written (or, for a review asked through
  ``/api/v1/reviews``, its client has yet to send the revision);
- ``ready``: the next request exists: a link opens it (with JavaScript it opens at once);
- ``ended``: the session ended without a new draft (not for a review: its session ends with the
  feedback, and its revision comes as a new review, in a session of its own).

The next request is the oldest one still waiting in the user's queues, asked after the item either
in its session, or in a session that declares it replaces the item's (``metadata
["supersedes_session"]``: a review's revision). With JavaScript the page (``after_feedback.js``)
listens on the inbox socket and asks ``next.json`` again when a request of the session, or (for a
review) any new one, arrives. An item not answered with feedback (still waiting, approved,
rejected, cancelled…) has nothing to wait for: the page redirects to the item's own page (and
``next.json`` says ``decided``: an open page goes there). An item still waiting shows the
``waiting`` state (a second tab opened before the feedback is sent). Both are GETs of the user's
own queues: 404 outside them, as for the item itself.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from ...workflow_sessions.outcome import session_outcome
from ...workflows import review as review_workflow
from ..conf import inbox_setting
from ..items.refusals import with_answer
from ..items.selectors import item_for, queues_for
from ..items.serializers import list_entry
from ..live.changes import current_versions
from ..models import Item, ItemStatus
from .view_helpers import json_404

__all__ = ["after_feedback", "next_json", "next_request", "waiting_state"]


def next_request(user: object, item: Item) -> Item | None:
    """The oldest request asked after ``item``, still waiting, in one of ``user``'s queues: of
    ``item``'s session, or of a session that replaces it (``metadata["supersedes_session"]``: a
    review's revision); None while there is none."""
    later = Q(session_id=item.session_id) | Q(workflow=item.workflow, metadata__supersedes_session=item.session_id)
    return (
        Item.objects.filter(later, pk__gt=item.pk, status=ItemStatus.PENDING, queue__in=queues_for(user))
        .select_related("queue", "claimed_by", "session")
        .order_by("pk")
        .first()
    )


def waiting_state(item: Item, upcoming: Item | None, outcome: dict[str, Any]) -> str:
    """``decided`` (``item`` was answered otherwise than with feedback, or cancelled: nothing to
    wait for), ``ready`` (``upcoming`` exists), ``ended`` (the session ended without one; never for
    a review, whose revision comes in a session of its own) or ``waiting``."""
    if _decided_otherwise(item):
        return "decided"
    if upcoming is not None:
        return "ready"
    if outcome["ended"] and item.workflow != review_workflow.NAME:
        return "ended"
    return "waiting"


def _decided_otherwise(item: Item) -> bool:
    """Whether ``item``, as its answer stands (``refusals.with_answer``: the item may lag it by the
    relay), is no longer pending and was not answered with feedback (approved, rejected, answered,
    expired, cancelled, superseded…)."""
    seen = with_answer(item)
    return seen.status != ItemStatus.PENDING and not (seen.status == ItemStatus.RESOLVED and seen.decision == "revise")


def _feedback(item: Item, user: Any) -> dict[str, str] | None:
    """``{"text": the feedback item was answered with, "by": "you" or who sent it}``, or None (not
    answered yet: the page may be opened before the feedback is sent, and waits)."""
    seen = with_answer(item)
    if seen.decision != "revise":
        return None
    mine = seen.decided_by_id == getattr(user, "pk", None)
    return {"text": str(seen.response), "by": "you" if mine else seen.decided_by_label or "someone"}


@login_required
@require_GET
def after_feedback(request: HttpRequest, pk: int) -> HttpResponse:
    """The waiting page (see the module); a redirect to the item's page when it was answered
    otherwise than with feedback, or cancelled."""
    item = item_for(request.user, pk)
    if _decided_otherwise(item):
        return redirect("inbox:detail", pk=item.pk)
    queue_ids = list(queues_for(request.user).values_list("pk", flat=True))
    versions = current_versions(queue_ids)  # read before the next request: nothing after is missed
    upcoming = next_request(request.user, item)
    outcome = session_outcome(item.session)
    review = item.workflow == review_workflow.NAME
    return render(
        request,
        "inbox/after_feedback.html",
        {
            "item": item,
            "feedback": _feedback(item, request.user),
            "review": review,
            "next_item": upcoming,
            "state": waiting_state(item, upcoming, outcome),
            "outcome": outcome,
            "live": {
                "item": item.pk,
                "session": item.session_id,
                "review": review,
                "versions": {str(k): v for k, v in versions.items()},
                "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
                "next_url": f"/inbox/items/{upcoming.pk}/" if upcoming else None,
            },
        },
    )


@login_required
@json_404
@require_GET
def next_json(request: HttpRequest, pk: int) -> JsonResponse:
    """``{"next": list entry of the next request | null, "state": "waiting" | "ready" | "ended" |
    "decided", "url": the item's page, "session": session_outcome}`` (``decided``: answered
    otherwise than with feedback; the page goes to ``url``)."""
    item = item_for(request.user, pk)
    upcoming = next_request(request.user, item)
    outcome = session_outcome(item.session)
    return JsonResponse(
        {
            "next": list_entry(upcoming) if upcoming else None,
            "state": waiting_state(item, upcoming, outcome),
            "url": f"/inbox/items/{item.pk}/",
            "session": outcome,
        }
    )
