"""Times written for people: relative ("due in 52 min", "3 h ago") with the absolute time and its
zone for a hover (``<time datetime title>``), in the zone active for the request (the person's:
``middleware.TimeZoneMiddleware``).

``static/console/time.js`` keeps the relative texts current in the page with the same rules
(:func:`span`, :func:`relative`): change both together.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

__all__ = ["Mode", "absolute", "relative", "span", "time_tag"]

Mode = Literal["ago", "due"]
"""``ago``: "3 h ago" / "in 3 h"; ``due``: "due in 3 h" / "overdue by 3 h"."""

_UNITS = ((86_400, "d"), (3_600, "h"), (60, "min"))


def span(seconds: float, parts: int = 1) -> str:
    """A duration in its largest whole unit, rounded down: 3,599 s → "59 min", 90,000 s → "1 d".

    ``parts=2`` adds the next smaller unit when it is not zero, so a countdown does not read an
    hour short: 17,999 s → "4 h 59 min", 90,000 s → "1 d 1 h", 7,200 s → "2 h".
    """
    whole = int(abs(seconds))
    for index, (size, name) in enumerate(_UNITS):
        if whole >= size:
            text = f"{whole // size} {name}"
            if parts > 1 and index + 1 < len(_UNITS):
                smaller, smaller_name = _UNITS[index + 1]
                if rest := whole % size // smaller:
                    text += f" {rest} {smaller_name}"
            return text
    return f"{whole} s"


def relative(value: dt.datetime, mode: Mode = "ago", now: dt.datetime | None = None) -> str:
    """``value`` from ``now`` (default: now) in words, per ``mode`` (see :data:`Mode`).

    Under a minute, ``ago`` says "just now" (either way); ``due`` counts the seconds, and names two
    units above an hour ("due in 4 h 59 min", not "due in 4 h").
    """
    delta = (value - (now or timezone.now())).total_seconds()
    if mode == "due":
        return f"due in {span(delta, 2)}" if delta > 0 else f"overdue by {span(delta, 2)}"
    if abs(delta) < 60:
        return "just now"
    return f"in {span(delta)}" if delta > 0 else f"{span(delta)} ago"


def absolute(value: dt.datetime) -> str:
    """``2026-12-01 19:38:05 CET (Europe/Berlin)`` in the active zone (``UTC`` alone for UTC)."""
    local = timezone.localtime(value)
    zone = timezone.get_current_timezone_name()
    short = local.tzname() or zone
    named = "" if zone in (short, "UTC") else f" ({zone})"
    return f"{local:%Y-%m-%d %H:%M:%S} {short}{named}"


def time_tag(value: dt.datetime | None, mode: Mode = "ago", *, extra_class: str = "", **data: str) -> SafeString:
    """``<time datetime="ISO" title="absolute" data-rel="mode">relative</time>`` (escaped), or "—".

    ``data`` adds ``data-*`` attributes (``due_soon_at`` → ``data-due-soon-at``) for scripts.
    """
    if value is None:
        return mark_safe('<span class="muted">—</span>')
    attributes = format_html_join("", ' data-{}="{}"', ((n.replace("_", "-"), t) for n, t in sorted(data.items())))
    return format_html(
        '<time datetime="{}" title="{}" data-rel="{}"{}{}>{}</time>',
        value.isoformat(),
        absolute(value),
        mode,
        format_html(' class="{}"', extra_class) if extra_class else "",
        attributes,
        relative(value, mode),
    )
