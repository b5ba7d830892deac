"""JSON Schema ``format`` for generated forms: the checks, the HTML input types and the messages.

jsonschema checks a ``format`` only with a ``FormatChecker``, and without its optional extras
(not installed here) it knows neither ``uri`` nor ``date-time``, and takes any text holding an
"@" as an ``email``: :data:`FORMAT_CHECKER` adds those three, strictly enough for a reviewer's
typing mistake (``email``: one "@" between a name and a dotted domain, no space; ``uri``: a
scheme and something after it, no space; ``date-time``: RFC 3339 with its offset). ``date`` and
the others stay jsonschema's own.

A ``date-time`` field is an ``<input type="datetime-local">``: it posts a wall time without a
zone (``2026-12-02T14:30``), read in the reviewer's time zone (Django's current one) and stored
with its offset (``2026-12-02T14:30:00+01:00``); a stored value is shown back in that zone.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import urlsplit

import jsonschema
from django.utils import timezone

__all__ = ["FORMAT_CHECKER", "format_message", "input_type", "posted_value", "shown_value"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$")
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

FORMAT_CHECKER = jsonschema.FormatChecker()


@FORMAT_CHECKER.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.match(value))


@FORMAT_CHECKER.checks("uri")
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an unclosed "[" in the host
        return False
    scheme_ok = bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", parts.scheme))
    return scheme_ok and bool(parts.netloc or parts.path)


@FORMAT_CHECKER.checks("date-time")
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.match(value):
        return False
    try:
        dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:  # e.g. 2026-02-30
        return False
    return True


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
