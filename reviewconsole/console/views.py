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
from ..inbox.models import Interrupt
from ..workflow_sessions.models import WorkflowSession
from ..workflow_sessions.outcome import session_result


def home(request: HttpRequest) -> HttpResponse:
    return redirect("inbox:index")


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on every page (the admin's too): the SVG icon."""
    return redirect(static("console/favicon.svg"))


@staff_member_required
@require_GET
def session_json(request: HttpRequest, session_id: str) -> JsonResponse:
    """Status, state, result, interrupts and events (ADK JSON) of one session.

    Who may read it: whoever may open the session's admin page (view permission on sessions);
    a staff user without it gets 403, as there. Each read is audited as ``session.view``.
    """
    if not admin.site.get_model_admin(WorkflowSession).has_view_permission(request):
        raise PermissionDenied
    session = get_object_or_404(WorkflowSession, pk=session_id)
    audit_record(action="session.view", user=request.user, target=session, request=request, detail={"as": "json"})
    interrupts = Interrupt.objects.filter(session=session).order_by("id")
    return JsonResponse(
        {
            "id": session.id,
            "workflow": session.workflow,
            "status": session.status,
            "state": session.state,
            "output": session.output,
            # Once it ended: the output, else the failure's or the last message (output may be null).
            "result": session_result(session),
            "created_at": session.created_at.isoformat(),
            "updated_at": session.updated_at.isoformat(),
            "interrupts": [
                {
                    "id": i.interrupt_id,
                    "kind": i.kind,
                    "status": i.status,
                    "message": i.message,
                    "payload": i.payload,
                    "response_schema": i.response_schema,
                    "queue": i.queue.slug,
                    "response": i.response,
                    "decision": i.decision,
                    # What the decider gave with it: a reason or comment, and their edit of the draft.
                    "reason": i.reason or None,
                    "edits": i.edit_diff or None,
                    "decided_by": i.decided_by_label or None,
                    "decided_at": i.decided_at.isoformat() if i.decided_at else None,
                    "url": f"/inbox/items/{i.pk}/",
                }
                for i in interrupts.select_related("queue")
            ],
            "events": list(session.events.order_by("seq").values_list("data", flat=True)),
        }
    )
