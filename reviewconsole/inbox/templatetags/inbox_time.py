"""``{% load inbox_time %}``: an item's due time as a live countdown.

``{{ item|countdown }}`` is ``<time class="countdown" datetime="<due>" data-rel="due"
data-due-soon-at="<ISO>" title="<absolute>">due in 52 min</time>`` for a pending item with a due
time (class ``sla-soon`` once it is near, ``sla-late`` once passed: ``items/sla.py``), the
due time from now for a decided one, and "—" without one. ``{{ item|due_outcome }}`` says how a
decided item's decision stood against its due time ("decided 2 h 10 min before it was due").
``static/console/time.js`` keeps the countdown's text and classes current without a reload (and
marks the row, ``tr[data-id]``, ``overdue``).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ...preferences.times import absolute, span, time_tag
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


@register.filter
def due_outcome(item: Item) -> SafeString:
    """A decided item's decision against its due time, the due time on hover: "decided 2 h 10 min
    before it was due", "decided 5 min after it was due", "expired when it was due"; "was due
    <time>" without a decision time (cancelled), "" without a due time."""
    if item.due_at is None:
        return SafeString("")
    if item.decision == "timeout":
        text = "expired when it was due"
    elif item.decided_at is None:
        return format_html("was due {}", time_tag(item.due_at, "ago"))
    else:
        early = (item.due_at - item.decided_at).total_seconds()
        text = f"decided {span(early, 2)} {'before' if early >= 0 else 'after'} it was due"
    return format_html('<span title="due {}">{}</span>', absolute(item.due_at), text)
