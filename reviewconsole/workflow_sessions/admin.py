"""The outbox in the admin: every event, read-only; given-up ones (``failed_at``) filterable. The
input queued while a session of its key was open (``Arrival``, ``arrivals.py``), read-only.

The sessions' own pages (timeline, export, Retry) are the console's (``console/admin.py``): they
show sessions with their inbox items, downstream of this app.
"""

from __future__ import annotations

from django.contrib import admin

from ..read_only_admin import ReadOnlyAdmin
from .models import Arrival, OutboxEvent


class OutboxStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):  # type: ignore[no-untyped-def]
        return [("waiting", "Not published"), ("failed", "Given up"), ("published", "Published")]

    def queryset(self, request, queryset):  # type: ignore[no-untyped-def]
        if self.value() == "waiting":
            return queryset.filter(published_at__isnull=True)
        if self.value() == "failed":
            return queryset.filter(failed_at__isnull=False)
        if self.value() == "published":
            return queryset.filter(published_at__isnull=False, failed_at__isnull=True)
        return queryset


@admin.register(OutboxEvent)
class OutboxEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "session_id", "created_at", "published_at", "attempts", "last_error", "failed_at"]
    list_filter = [OutboxStateFilter, "kind"]
    search_fields = ["session_id"]
    readonly_fields = [f.name for f in OutboxEvent._meta.fields]


@admin.register(Arrival)
class ArrivalAdmin(ReadOnlyAdmin):
    list_display = ["id", "workflow", "correlation_key", "session", "target", "status", "started_session", "created_at"]
    list_filter = ["status", "target", "workflow"]
    search_fields = ["correlation_key", "session__id"]
    readonly_fields = [f.name for f in Arrival._meta.fields]
