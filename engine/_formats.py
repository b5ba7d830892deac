"""JSON Schema ``format`` checks for answers, whichever door they came through.

jsonschema checks a ``format`` only when given a ``FormatChecker``, and without its optional
extras (not installed here) it knows neither ``uri`` nor ``date-time`` and takes any text
holding an "@" as an ``email``. :data:`FORMAT_CHECKER` adds those three, strictly enough for a
person's typing mistake: ``email``, one "@" between a name and a dotted domain, no space;
``uri``, a scheme and something after it, no space; ``date-time``, RFC 3339 with its offset
(``2026-12-02T14:30:00+01:00``). ``date``, ``time`` and the other formats stay jsonschema's own.
A value that is not a string passes every format (the schema's ``type`` says what it must be).

:data:`FORMAT_EXPECTED` says what a value of each format looks like, for the message of an
answer that fails one (``engine._interrupts.normalize_answer``).
"""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlsplit

import jsonschema

__all__ = ["FORMAT_CHECKER", "FORMAT_EXPECTED", "format_error"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$")
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")

FORMAT_EXPECTED = {
    "email": "an email address, e.g. name@example.com",
    "uri": "a full address with its scheme, e.g. https://example.com/page",
    "date": "a date, e.g. 2026-12-31",
    "date-time": "a date and time with its offset, e.g. 2026-12-31T14:30:00+01:00",
    "time": "a time with its offset, e.g. 14:30:00+00:00",
}
"""Format → what a value of it looks like (:func:`format_error`)."""

FORMAT_CHECKER = jsonschema.FormatChecker()
"""jsonschema's own format checks, with ``email``, ``uri`` and ``date-time`` as above."""


def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.fullmatch(value))


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an unclosed "[" in the host
        return False
    return bool(_SCHEME.fullmatch(parts.scheme)) and bool(parts.netloc or parts.path)


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.fullmatch(value):
        return False
    try:
        dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:  # e.g. 2026-02-30
        return False
    return True


for _name, _check in (("email", _is_email), ("uri", _is_uri), ("date-time", _is_date_time)):
    FORMAT_CHECKER.checks(_name)(_check)


def format_error(schema_format: object) -> str:
    """The message for a value failing ``schema_format``, without repeating the value (it may be
    long, or private): ``"not an email address, e.g. name@example.com"``."""
    return f"not {FORMAT_EXPECTED.get(str(schema_format), f'in the format {schema_format}')}"
