"""The auditor's view of sessions: filters, search, and a read-only timeline with interrupts."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from ..inbox.models import Interrupt
from .models import Checkpoint, Delivery, Event, WorkflowSession
from .timeline import timeline


class ReadOnlyAdmin(admin.ModelAdmin):
    """Nobody adds, changes or deletes these rows through the admin; they record what happened."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class InterruptInline(admin.TabularInline):
    model = Interrupt
    fields = ("interrupt_id", "kind", "queue", "status", "decision", "decided_by_label", "decided_at", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(WorkflowSession)
class WorkflowSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "workflow", "status", "title", "created_at", "updated_at")
    list_filter = ("workflow", "status", "created_at")
    search_fields = ("id", "title")
    date_hierarchy = "created_at"
    inlines = [InterruptInline]
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
        "error",
        "event_timeline",
    )
    readonly_fields = fields

    class Media:
        css = {"all": ("console/admin.css",)}

    @admin.display(description="Timeline")
    def event_timeline(self, obj: WorkflowSession) -> SafeString:
        return SafeString(render_to_string("admin/workflow_sessions/timeline.html", {"rows": timeline(obj)}))


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("session", "seq", "author", "node_path", "timestamp")
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
        "timestamp",
        "data",
    )


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyAdmin):
    list_display = ("id", "session", "event_seq", "created_at")
    readonly_fields = ("id", "session", "event_seq", "created_at", "data")


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("session", "interrupt_id", "final", "created_at", "applied_at")
    readonly_fields = ("session", "interrupt_id", "value", "final", "created_at", "applied_at")
