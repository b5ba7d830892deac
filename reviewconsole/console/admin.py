"""The auditor's view of sessions: filters, search, and a read-only timeline with interrupts.

Sessions list with their outcome (approved, rejected, answered, expired, cancelled, failed: the
last decision of a completed session, else its status; ``session_outcomes.py``) and filter by it,
by workflow, status, date, decider and queue, and search by id (or its first characters, as the
list shows it), title and the content of their events. A session's page can be exported as an
ADK trace (``export/``), and every view and export of a session is audited. A failed session's
page shows its failure as the inbox does (``workflow_sessions.failure.failure_message``); the
stored error, which may quote an exception's text, only to superusers. The Retry action is
offered only to users who manage a queue (or superusers), never to the read-only auditor
(``has_retry_permission``), and each session's workflow is checked again
(``inbox.permissions.require_retry_permission``).

It lives in the console app, downstream of the sessions and the inbox it shows together.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from engine import EngineError, SessionStatus

from ..audit.services import audit_record
from ..inbox.items.permissions import require_retry_permission
from ..inbox.items.selectors import managed_queues_for
from ..inbox.models import Item, Queue
from ..inbox.pictures.serving import mermaid_available, picture_csp, picture_media, session_picture
from ..read_only_admin import ReadOnlyAdmin, when
from ..workflow_sessions.export import session_export
from ..workflow_sessions.models import Answer, Checkpoint, Event, WorkflowSession
from ..workflow_sessions.outcome import session_result
from ..workflow_sessions.services import session_retry
from ..workflows import UnknownWorkflowError
from . import admin_decisions  # noqa: F401 (registers the decisions' admin)
from .session_outcomes import OUTCOMES, outcome_q, session_outcome_word, with_last_decision
from .timeline import timeline


class ItemInline(admin.TabularInline):
    model = Item
    fields = ("interrupt_id", "kind", "queue", "status", "decision", "decided_by_label", "decided_at", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class DeciderFilter(admin.SimpleListFilter):
    """Sessions with an interrupt decided by this person or client."""

    title = "decider"
    parameter_name = "decider"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        labels = Item.objects.exclude(decided_by_label="").values_list("decided_by_label", flat=True)
        return [(label, label) for label in sorted(set(labels))[:200]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(items__decided_by_label=self.value()).distinct()
        return queryset


class QueueFilter(admin.SimpleListFilter):
    """Sessions with an interrupt routed to this queue."""

    title = "queue"
    parameter_name = "queue"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(q.slug, q.name) for q in Queue.objects.order_by("name")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(items__queue__slug=self.value()).distinct()
        return queryset


class OutcomeFilter(admin.SimpleListFilter):
    """Sessions by outcome: approved, rejected, … (``session_outcomes.OUTCOMES``)."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(outcome, outcome) for outcome in OUTCOMES]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(outcome_q(self.value())) if self.value() in OUTCOMES else queryset


@admin.register(WorkflowSession)
class WorkflowSessionAdmin(ReadOnlyAdmin):
    list_display = ("session", "title", "workflow", "outcome", "created", "updated")
    list_display_links = ("session",)
    list_filter = (OutcomeFilter, "workflow", "status", "created_at", DeciderFilter, QueueFilter)
    # "^id": the id, or its first characters as the list shows them; "events__data" searches the
    # content of every event (texts, calls, answers), as JSON text.
    search_fields = ("^id", "title", "events__data")
    date_hierarchy = "created_at"
    inlines = [ItemInline]
    fields = (
        "id",
        "workflow",
        "workflow_version",
        "status",
        "title",
        "user_id",
        "created_at",
        "updated_at",
        "state",
        "output",
        "failure",
        "error",
        "export_link",
        "workflow_picture",
        "event_timeline",
    )
    readonly_fields = fields
    actions = ["retry_sessions"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[WorkflowSession]:
        return with_last_decision(super().get_queryset(request))

    @admin.display(description="Session", ordering="id")
    def session(self, obj: WorkflowSession) -> SafeString:
        """The id's first 8 characters (the whole id on hover and in the link)."""
        return format_html('<code title="{}">{}</code>', obj.pk, obj.pk[:8])

    @admin.display(description="Outcome")
    def outcome(self, obj: WorkflowSession) -> str:
        return session_outcome_word(obj.status, getattr(obj, "last_decision", None))

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: WorkflowSession) -> str:
        return when(obj.created_at)

    @admin.display(description="Updated", ordering="updated_at")
    def updated(self, obj: WorkflowSession) -> str:
        return when(obj.updated_at)

    def get_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        """Every field; the stored ``error`` (it may quote an exception) for superusers only."""
        shown = list(super().get_fields(request, obj))
        return shown if getattr(request.user, "is_superuser", False) else [f for f in shown if f != "error"]

    @admin.display(description="Failure")
    def failure(self, obj: WorkflowSession) -> str:
        """Why a failed session failed, in the engine's words (the inbox shows the same sentence)."""
        return (session_result(obj) or "") if obj.status == SessionStatus.FAILED else ""

    def has_retry_permission(self, request: HttpRequest) -> bool:
        """Whether the Retry action is offered: the user manages a queue (superusers all of them)."""
        return managed_queues_for(request.user).exists()

    @admin.action(description="Retry the selected failed sessions from their last checkpoint", permissions=["retry"])
    def retry_sessions(self, request: HttpRequest, queryset: QuerySet[WorkflowSession]) -> None:
        """Retry each selected session through the session service (queue managers only; audited)."""
        done, refused = 0, []
        for session in queryset:
            try:
                require_retry_permission(request.user, session)
                session_retry(session=session, user=request.user, request=request)
                done += 1
            except (PermissionDenied, EngineError, UnknownWorkflowError) as exc:
                refused.append(f"{session.id}: {exc}")
        if done:
            self.message_user(request, f"{done} session(s) run again from their last checkpoint.", messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.ERROR)

    def get_urls(self) -> list[URLPattern]:
        export = path(
            "<path:object_id>/export/",
            self.admin_site.admin_view(self.export_view),
            name="workflow_sessions_workflowsession_export",
        )
        return [export, *super().get_urls()]

    def export_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The session as an ADK trace (JSON download); needs view permission; audited."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        session = get_object_or_404(WorkflowSession, pk=object_id)
        audit_record(action="session.export", user=request.user, target=session, request=request)
        response = JsonResponse(session_export(session), json_dumps_params={"indent": 1})
        response["Content-Disposition"] = f'attachment; filename="session-{session.id}.json"'
        return response

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().change_view(request, object_id, form_url, extra_context)
        policy = picture_csp()  # the workflow picture is drawn with inline styles (inbox/pictures/serving.py)
        if policy is not None:
            response._csp_config = policy  # type: ignore[attr-defined]
        if response.status_code == 200 and request.method == "GET":
            audit_record(
                action="session.view",
                user=request.user,
                target_type="workflow_sessions.workflowsession",
                target_id=object_id,
                request=request,
            )
        return response

    @admin.display(description="Export")
    def export_link(self, obj: WorkflowSession) -> SafeString:
        url = reverse("admin:workflow_sessions_workflowsession_export", args=[obj.pk])
        return format_html('<a href="{}">ADK trace (JSON)</a>', url)

    @property
    def media(self) -> forms.Media:
        # The picture's scripts (the timeline's styles, console/admin.css, are on every admin page:
        # templates/admin/base_site.html).
        return super().media + picture_media()

    @admin.display(description="Workflow")
    def workflow_picture(self, obj: WorkflowSession) -> SafeString:
        """The workflow's graph with the path this session took and where it waits (inbox/pictures/graph.py)."""
        context = {"picture": session_picture(obj), "mermaid": mermaid_available()}
        return SafeString(render_to_string("inbox/_picture.html", context))

    @admin.display(description="Timeline")
    def event_timeline(self, obj: WorkflowSession) -> SafeString:
        return SafeString(render_to_string("admin/workflow_sessions/timeline.html", {"rows": timeline(obj)}))


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("session", "seq", "author", "node_path", "at")
    list_filter = ("author",)
    search_fields = ("session__id", "node_path")
    readonly_fields = (
        "session",
        "seq",
        "event_id",
        "invocation_id",
        "author",
        "node_path",
        "branch",
        "at",
        "timestamp",
        "adk_json",
    )

    @admin.display(description="At", ordering="timestamp")
    def at(self, obj: Event) -> str:
        """The event's time as a date (its ``timestamp`` is ADK's seconds since the epoch)."""
        return when(dt.datetime.fromtimestamp(obj.timestamp, tz=dt.UTC))

    @admin.display(description="Data")
    def adk_json(self, obj: Event) -> str:
        """The event's whole ADK session JSON (its row's ``data`` holds only what the columns do not)."""
        return json.dumps(obj.adk_json(), ensure_ascii=False)


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyAdmin):
    list_display = ("id", "session", "event_seq", "created_at")
    readonly_fields = ("id", "session", "event_seq", "created_at", "data")


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdmin):
    list_display = ("session", "interrupt_id", "final", "created_at", "applied_at")
    readonly_fields = ("session", "interrupt_id", "value", "final", "created_at", "applied_at")
