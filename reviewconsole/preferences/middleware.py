"""Activates the person's time zone (Django's ``timezone.activate``) and locale
(``locales.activate``) for the request, so templates, ``timezone.localtime`` and the money and
numbers of ``inbox/pages/formats.py`` follow them: UTC and the browser's locale (else ``en-US``)
until their browser or they tell otherwise."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from . import locales
from .services import locale_reported, reader_locale, shown


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


class LocaleMiddleware:
    """The reader's locale for the request: the one they picked; else their browser's
    (``Accept-Language`` negotiated, ``locales.negotiate``), saved for them when it changed
    (``services.locale_reported``: one write per change, so their live rows and mails follow it);
    else the one saved; else ``en-US``. Place it after ``AuthenticationMiddleware``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        browser = locales.negotiate(request.headers.get("Accept-Language", ""))
        if browser:
            locale_reported(request, browser)
        kept = shown(request)
        locales.activate(reader_locale(kept) if kept["locale_chosen"] or not browser else browser)
        try:
            return self.get_response(request)
        finally:
            locales.deactivate()
