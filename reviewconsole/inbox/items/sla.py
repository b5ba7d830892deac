"""When a pending item's due time counts as near: the list and the item page turn its countdown
amber then, and red once the due time has passed.

An item is *due soon* from ``due_at - lead`` on, where ``lead`` is a quarter of the time it was
given (``due_at - created_at``) but at most ``DUE_SOON_SECONDS`` (default four hours): a
ten-minute request turns amber 2.5 minutes before it is due, a week-long one 4 hours before (a
deferred item's time runs from when it was asked to its new due time).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from django.utils import timezone

from ..conf import inbox_setting
from ..models import Item

__all__ = ["SlaState", "due_soon_at", "sla_state"]

SlaState = Literal["", "soon", "late"]


def due_soon_at(item: Item) -> dt.datetime | None:
    """When ``item`` turns amber (None: it has no due time)."""
    if item.due_at is None:
        return None
    given = max(dt.timedelta(0), item.due_at - item.created_at)
    lead = min(given / 4, dt.timedelta(seconds=float(inbox_setting("DUE_SOON_SECONDS"))))
    return item.due_at - lead


def sla_state(item: Item, now: dt.datetime | None = None) -> SlaState:
    """``"late"`` (pending past its due time), ``"soon"`` (pending, past :func:`due_soon_at`) or ``""``."""
    soon = due_soon_at(item)
    if not item.is_pending or soon is None or item.due_at is None:
        return ""
    now = now or timezone.now()
    if item.due_at <= now:
        return "late"
    return "soon" if soon <= now else ""
