"""Activates the person's time zone for the request (Django's ``timezone.activate``), so templates
and ``timezone.localtime`` show their local time; UTC until their browser or they tell it."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from .services import shown


class TimeZoneMiddleware:
    """Place it after ``AuthenticationMiddleware`` (it reads the person's preferences)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        name = shown(request)["time_zone"]
        try:
            timezone.activate(zoneinfo.ZoneInfo(name)) if name else timezone.deactivate()
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            timezone.deactivate()  # a zone removed from this system's database since it was saved
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
