"""After feedback: the page that waits for the session's next request (the new draft) and opens it.

A reviewer who sends feedback (``revise``) on an item is sent to
``/inbox/items/<pk>/after-feedback/``: "Feedback sent: a new draft is being written", a link to
the session's next request once it exists, and the session's status. With JavaScript the page
(``after_feedback.js``) listens on the inbox socket for the session's next request and opens it;
``next.json`` answers the same question after a (re)connect. Both are GETs of the user's own
queues: 404 outside them, as for the item itself.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ...workflow_sessions.outcome import session_outcome
from ..conf import inbox_setting
from ..items.selectors import item_for, queues_for
from ..items.serializers import list_entry
from ..live.changes import current_versions
from ..models import Item, ItemStatus
from .view_helpers import json_404

__all__ = ["after_feedback", "next_json", "next_request"]


def next_request(user: object, item: Item) -> Item | None:
    """The oldest request of ``item``'s session asked after it, still waiting, in one of
    ``user``'s queues; None while there is none."""
    return (
        Item.objects.filter(
            session_id=item.session_id, pk__gt=item.pk, status=ItemStatus.PENDING, queue__in=queues_for(user)
        )
        .select_related("queue", "claimed_by", "session")
        .order_by("pk")
        .first()
    )


@login_required
@require_GET
def after_feedback(request: HttpRequest, pk: int) -> HttpResponse:
    """The waiting page: the session's next request when it exists, else the session's status."""
    item = item_for(request.user, pk)
    queue_ids = list(queues_for(request.user).values_list("pk", flat=True))
    versions = current_versions(queue_ids)  # read before the next request: nothing after is missed
    upcoming = next_request(request.user, item)
    return render(
        request,
        "inbox/after_feedback.html",
        {
            "item": item,
            "next_item": upcoming,
            "outcome": session_outcome(item.session),
            "live": {
                "item": item.pk,
                "session": item.session_id,
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
    """``{"next": list entry of the session's next request | null, "session": session_outcome}``."""
    item = item_for(request.user, pk)
    upcoming = next_request(request.user, item)
    return JsonResponse({"next": list_entry(upcoming) if upcoming else None, "session": session_outcome(item.session)})
