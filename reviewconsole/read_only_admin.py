"""The base of every admin over rows that record what happened (sessions, events, audit entries,
webhook deliveries, outbound messages): auditors read them, nobody edits them in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

__all__ = ["ReadOnlyAdmin"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Nobody adds, changes or deletes these rows through the admin; they record what happened."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
