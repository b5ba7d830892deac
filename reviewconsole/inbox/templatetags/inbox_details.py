"""``{% load inbox_details %}``: a request's details (its payload, any JSON) as readable key/value.

``{{ value|detail_rows }}`` is a list of ``{"label": str, "text": str | None, "rows": list | None}``
for ``templates/inbox/_details.html``: an object's keys as labels ("affected_customers" →
"Affected customers"), text and numbers as they are, true/false as Yes/No, null as "—", a list of
plain values joined by commas, and nested objects (and lists of them) as rows of their own
(``rows``; ``text`` None). A value that is not an object is one row labelled "Value". Every text
is plain: the template escapes it like any other outside text.
"""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()

_MAX_DEPTH = 6  # deeper than this, a value is shown as JSON text


def _label(key: Any) -> str:
    text = str(key).replace("_", " ").strip()
    return text[:1].upper() + text[1:] if text else "—"


def _plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _row(label: str, value: Any, depth: int) -> dict[str, Any]:
    nested = isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict | list) for v in value))
    if nested and depth < _MAX_DEPTH:
        return {"label": label, "text": None, "rows": _rows(value, depth + 1)}
    if isinstance(value, list) and not nested:
        return {"label": label, "text": ", ".join(_plain(v) for v in value) or "—", "rows": None}
    return {"label": label, "text": _plain(value), "rows": None}


def _rows(value: Any, depth: int) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [_row(_label(k), v, depth) for k, v in value.items()]
    if isinstance(value, list):
        return [_row(str(n), v, depth) for n, v in enumerate(value, start=1)]
    return [_row("Value", value, depth)]


@register.filter
def detail_rows(value: Any) -> list[dict[str, Any]]:
    """``value`` (any JSON) as the rows ``_details.html`` shows."""
    return _rows(value, 0)
