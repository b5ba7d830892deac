from django.contrib import admin

from ..workflow_sessions.admin import ReadOnlyAdmin
from .models import Interrupt, Queue


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "group")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Interrupt)
class InterruptAdmin(ReadOnlyAdmin):
    list_display = ("interrupt_id", "session", "kind", "queue", "status", "decision", "decided_by_label", "decided_at")
    list_filter = ("status", "kind", "queue", "decision")
    search_fields = ("interrupt_id", "session__id", "message")
    readonly_fields = [f.name for f in Interrupt._meta.fields]
