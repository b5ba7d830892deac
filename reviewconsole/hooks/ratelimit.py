"""A per-endpoint rate limit shared by every web process: counters per minute in the database.

A fixed one-minute window per endpoint: the row for (endpoint, minute) is created once (the unique
constraint settles a race between processes) and incremented with ``count = count + 1`` in the
database, so concurrent requests on several processes are all counted.
"""

from __future__ import annotations

import datetime as dt
import math

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .models import RateWindow, WebhookEndpoint

__all__ = ["rate_limit_check"]

WINDOW = dt.timedelta(minutes=1)


def _limit(endpoint: WebhookEndpoint) -> int:
    return endpoint.rate_limit if endpoint.rate_limit is not None else int(settings.REVIEWCONSOLE["WEBHOOK_RATE_LIMIT"])


def rate_limit_check(*, endpoint: WebhookEndpoint) -> int | None:
    """Count one delivery; None when within the limit, else the seconds until the window ends (≥ 1)."""
    now = timezone.now()
    start = now.replace(second=0, microsecond=0)
    with transaction.atomic():
        changed = RateWindow.objects.filter(endpoint=endpoint, window_start=start).update(count=F("count") + 1)
        if not changed:
            try:
                with transaction.atomic():
                    RateWindow.objects.create(endpoint=endpoint, window_start=start, count=1)
            except IntegrityError:  # another process created it first
                RateWindow.objects.filter(endpoint=endpoint, window_start=start).update(count=F("count") + 1)
            RateWindow.objects.filter(endpoint=endpoint, window_start__lt=start - dt.timedelta(hours=1)).delete()
        count = RateWindow.objects.values_list("count", flat=True).get(endpoint=endpoint, window_start=start)
    if count <= _limit(endpoint):
        return None
    return max(1, math.ceil((start + WINDOW - now).total_seconds()))
