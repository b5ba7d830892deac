from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ..read_only_admin import ReadOnlyAdmin, when
from .models import Item, Queue


class DecisionFilter(admin.SimpleListFilter):
    """Items by decision: those made (approve, reject, …), not the blank of the pending ones (a
    link with no text, which a screen reader cannot name)."""

    title = "decision"
    parameter_name = "decision"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        made = Item.objects.exclude(decision="").order_by().values_list("decision", flat=True).distinct()
        return [(decision, decision) for decision in sorted(made)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(decision=self.value()) if self.value() else queryset


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "group", "managers", "claim_ttl_seconds", "version")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("version",)


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ("request", "queue", "workflow", "status", "decision", "decider", "decided", "created")
    list_display_links = ("request",)
    list_filter = ("status", "kind", "queue", DecisionFilter, "workflow")
    list_select_related = ("queue",)
    search_fields = ("interrupt_id", "session__id", "title", "message")
    readonly_fields = [f.name for f in Item._meta.fields]

    @admin.display(description="Request", ordering="title")
    def request(self, obj: Item) -> str:
        return obj.title or obj.interrupt_id

    @admin.display(description="Decided by", ordering="decided_by_label")
    def decider(self, obj: Item) -> str:
        return obj.decided_by_label

    @admin.display(description="Decided", ordering="decided_at")
    def decided(self, obj: Item) -> str:
        return when(obj.decided_at)

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: Item) -> str:
        return when(obj.created_at)
