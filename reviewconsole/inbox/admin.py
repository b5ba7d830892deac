from django.contrib import admin

from ..read_only_admin import ReadOnlyAdmin
from .models import Item, Queue


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "group", "managers", "claim_ttl_seconds", "version")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("version",)


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = (
        "interrupt_id",
        "session",
        "kind",
        "queue",
        "status",
        "claimed_by",
        "due_at",
        "decision",
        "decided_by_label",
        "decided_at",
    )
    list_filter = ("status", "kind", "queue", "decision", "workflow")
    search_fields = ("interrupt_id", "session__id", "title", "message")
    readonly_fields = [f.name for f in Item._meta.fields]
