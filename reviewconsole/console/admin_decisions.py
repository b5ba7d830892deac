"""Decisions in the admin: every decided item, newest first, for auditors (``console.Decision``,
a proxy of ``inbox.Item``): when, what, by whom (a person, an approval policy, an API client or the
expiry), why, on which request of which queue; filtered by decision, decider kind, queue and
workflow, by date, and searched by decider, request title or session id. Read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from ..inbox.admin import DecisionFilter
from ..inbox.items.policy_gate import by_policy
from ..read_only_admin import ReadOnlyAdmin, when
from .models import Decision

DECIDERS: dict[str, tuple[str, Q]] = {
    "people": ("people", Q(decided_by__isnull=False)),
    "policy": ("approval policies", by_policy()),
    "clients": (
        "API and AG-UI clients",
        Q(decided_by_label__startswith="client:") | Q(decided_by_label__startswith="agui:"),
    ),
    "expiry": ("the due time (expired)", Q(decision="timeout")),
}
"""Who decided, for the filter: a key → (its label, the rows)."""


class DeciderKindFilter(admin.SimpleListFilter):
    title = "decided by"
    parameter_name = "decider"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(key, label) for key, (label, _) in DECIDERS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        chosen = DECIDERS.get(self.value() or "")
        return queryset.filter(chosen[1]) if chosen else queryset


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("decided", "decision", "decider", "request", "queue", "workflow", "reason_shown")
    list_display_links = ("decided",)
    list_filter = (DecisionFilter, DeciderKindFilter, "queue", "workflow")
    list_select_related = ("queue",)
    search_fields = ("decided_by_label", "title", "=session__id")
    date_hierarchy = "decided_at"
    readonly_fields = ("decided_at", "decision", "decided_by_label", "reason", "edit_diff", "response", "request")
    fields = readonly_fields

    @admin.display(description="Decided", ordering="decided_at")
    def decided(self, obj: Decision) -> str:
        return when(obj.decided_at)

    @admin.display(description="Decided by", ordering="decided_by_label")
    def decider(self, obj: Decision) -> str:
        return obj.decided_by_label

    @admin.display(description="Request", ordering="title")
    def request(self, obj: Decision) -> SafeString:
        """The item's title (or its id), linking to the item in the admin."""
        url = reverse("admin:inbox_item_change", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, obj.title or obj.interrupt_id)

    @admin.display(description="Reason")
    def reason_shown(self, obj: Decision) -> str:
        return Truncator(obj.reason).chars(80)
