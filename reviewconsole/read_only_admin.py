"""The base of every admin over rows that record what happened (sessions, events, audit entries,
webhook deliveries, outbound messages): auditors read them, nobody edits them in the admin. And
:func:`when`, how their lists show a time."""

from __future__ import annotations

import datetime as dt

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

__all__ = ["ReadOnlyAdmin", "when"]


def when(value: dt.datetime | None) -> str:
    """``2026-12-02 07:43 UTC``: minutes in the current time zone, named (no seconds, no
    microseconds: a list's column stays narrow); "—" for none. The row's page has the rest."""
    if value is None:
        return "—"
    shown = timezone.localtime(value)
    return f"{shown:%Y-%m-%d %H:%M} {shown.tzname()}"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Nobody adds, changes or deletes these rows through the admin; they record what happened."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
