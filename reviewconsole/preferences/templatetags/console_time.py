"""``{% load console_time %}``: times for people (see :mod:`reviewconsole.preferences.times`).

- ``{{ when|ago }}``: ``<time … data-rel="ago">3 h ago</time>``, the absolute time on hover.
- ``{{ when|absolute_time }}``: ``2026-12-01 19:38:05 CET (Europe/Berlin)``, plain text.
- ``{% current_zone %}``: the active zone's name (``UTC`` when none is known).
"""

from __future__ import annotations

import datetime as dt

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString

from ..times import absolute, time_tag

register = template.Library()


@register.filter
def ago(value: dt.datetime | None) -> SafeString:
    return time_tag(value, "ago")


@register.filter
def absolute_time(value: dt.datetime | None) -> str:
    return absolute(value) if value is not None else ""


@register.simple_tag
def current_zone() -> str:
    return timezone.get_current_timezone_name()
