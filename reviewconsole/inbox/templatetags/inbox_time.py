"""``{% load inbox_time %}``: an item's due time as a live countdown.

``{{ item|countdown }}`` is ``<time class="countdown" datetime="<due>" data-rel="due"
data-due-soon-at="<ISO>" title="<absolute>">due in 52 min</time>`` for a pending item with a due
time (class ``sla-soon`` once it is near, ``sla-late`` once passed: ``items/sla.py``), the
absolute due time for a decided one, and "—" without one. ``static/console/time.js`` keeps the
text and the classes current without a reload (and marks the row, ``tr[data-id]``, ``overdue``).
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from ...preferences.times import time_tag
from ..items.sla import due_soon_at, sla_state
from ..models import Item

register = template.Library()


@register.filter
def countdown(item: Item) -> SafeString:
    soon = due_soon_at(item)
    if not item.is_pending or soon is None:
        return time_tag(item.due_at, "ago")
    state = sla_state(item)
    classes = "countdown" + (f" sla-{state}" if state else "")
    return time_tag(item.due_at, "due", extra_class=classes, due_soon_at=soon.isoformat())
