"""JSON Schema ``format`` for generated forms: the HTML input types, the messages and the values.

The checks are the engine's (``engine.FORMAT_CHECKER``: every door checks an answer's formats
alike, the engine's ``normalize_answer`` again whatever door it came through); this module
says what they mean for a form: the input types and a reviewer's messages.

A ``date-time`` field is an ``<input type="datetime-local">``: it posts a wall time without a
zone (``2026-12-02T14:30``), read in the reviewer's time zone (Django's current one) and stored
with its offset (``2026-12-02T14:30:00+01:00``); a stored value is shown back in that zone.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.utils import timezone

__all__ = ["format_message", "input_type", "posted_value", "shown_value"]

_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")
_LOCAL = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$")  # what datetime-local posts

_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local", "time": "time"}
_MESSAGES = {
    "email": "Enter an email address, e.g. name@example.com.",
    "uri": "Enter a full web address, e.g. https://example.com/page.",
    "date": "Enter a date, e.g. 2026-12-31.",
    "date-time": "Enter a date and a time.",
    "time": "Enter a time, e.g. 14:30:00+00:00.",
}


def input_type(schema_format: Any) -> str:
    """The ``<input type>`` for a string of this ``format`` (``text`` for any other)."""
    return _INPUT_TYPES.get(str(schema_format), "text")


def format_message(schema_format: Any) -> str | None:
    """A reviewer's message for a value that fails its ``format``; None for a format not named here."""
    return _MESSAGES.get(str(schema_format))


def posted_value(schema_format: Any, raw: str) -> str:
    """A posted string as the answer holds it: a ``date-time`` field's wall time gets the
    reviewer's zone (``2026-12-02T14:30`` → ``2026-12-02T14:30:00+01:00``); anything else as posted."""
    if schema_format != "date-time" or not _LOCAL.match(raw.strip()):
        return raw
    try:
        wall = dt.datetime.fromisoformat(raw.strip())
    except ValueError:
        return raw  # the format check says what is wrong
    return timezone.make_aware(wall, timezone.get_current_timezone()).isoformat()


def shown_value(schema_format: Any, value: str) -> str:
    """A stored string as its field shows it: a ``date-time`` in the reviewer's zone as
    ``datetime-local`` takes it (``2026-12-02T14:30``); anything else, and a moment with no
    local time (past year 1 or 9999 there), as it is."""
    if schema_format != "date-time" or not _RFC3339.match(value):
        return value
    try:
        moment = dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return value
    try:
        local = timezone.localtime(moment, timezone.get_current_timezone())
    except OverflowError:  # e.g. 0001-01-01T00:00:00+14:00: before year 1 in UTC
        return value
    return local.strftime("%Y-%m-%dT%H:%M:%S" if local.second else "%Y-%m-%dT%H:%M")
