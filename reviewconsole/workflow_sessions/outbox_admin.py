"""The outbox in the admin: every event, read-only; given-up ones (``failed_at``) filterable.

Registered from ``apps.py`` (kept out of ``admin.py``, which holds the sessions' own pages).
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import OutboxEvent


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


class OutboxEventAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "session_id", "created_at", "published_at", "attempts", "last_error", "failed_at"]
    list_filter = [OutboxStateFilter, "kind"]
    search_fields = ["session_id"]
    readonly_fields = [f.name for f in OutboxEvent._meta.fields]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def register() -> None:
    if not admin.site.is_registered(OutboxEvent):
        admin.site.register(OutboxEvent, OutboxEventAdmin)
