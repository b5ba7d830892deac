"""Small console views: the home redirect, the favicon and the session JSON a script can follow."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.templatetags.static import static
from django.views.decorators.http import require_GET

from ..audit.services import audit_record
from ..inbox.items.serializers import session_with_items
from ..workflow_sessions.models import WorkflowSession


def home(request: HttpRequest) -> HttpResponse:
    return redirect("inbox:index")


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on every page (the admin's too): the SVG icon."""
    return redirect(static("console/favicon.svg"))


@staff_member_required
@require_GET
def session_json(request: HttpRequest, session_id: str) -> JsonResponse:
    """Status, state, result, interrupts and events (ADK JSON) of one session
    (``inbox.items.serializers.session_with_items``: the API's fields, and each item's reason, edits and page).

    Who may read it: whoever may open the session's admin page (view permission on sessions);
    a staff user without it gets 403, as there. Each read is audited as ``session.view``.
    """
    if not admin.site.get_model_admin(WorkflowSession).has_view_permission(request):
        raise PermissionDenied
    session = get_object_or_404(WorkflowSession, pk=session_id)
    audit_record(action="session.view", user=request.user, target=session, request=request, detail={"as": "json"})
    return JsonResponse(session_with_items(session))
