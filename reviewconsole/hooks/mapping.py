"""An endpoint's optional input mapping (the workflow's input from fields of the body) and its
thread key (which session a delivery belongs to: ``workflow_sessions/arrivals.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonpointer import JsonPointerException, resolve_pointer

__all__ = ["MISSING", "map_input", "thread_key_of"]

HEADER = "header:"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def _lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isascii() and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return MISSING
    return data


def map_input(body: Any, mapping: dict[str, str]) -> Any:
    """``body`` unchanged when ``mapping`` is empty; else ``{field: value at its dotted path}``.

    Paths go through dict keys and list indexes (``"items.0.text"``). A path that finds nothing
    leaves its field out, so the workflow's schema names the missing field in its 400 answer.
    """
    if not mapping:
        return body
    mapped = {field: _lookup(body, str(path)) for field, path in mapping.items()}
    return {k: v for k, v in mapped.items() if v is not MISSING}


def thread_key_of(spec: str, body: Any, headers: Mapping[str, str]) -> str | None:
    """The delivery's thread key as ``spec`` (the endpoint's ``thread_key``) says: a JSON pointer
    (RFC 6901, ``/ticket/id``) into the body as received, before any mapping, or ``header:<name>``
    (case-insensitive). A string or a whole number, as text (up to 200 characters); None when it is
    missing, empty or another type (the delivery is refused: ``thread_key_missing``)."""
    if spec.startswith(HEADER):
        name = spec[len(HEADER) :].strip().lower()
        value: Any = next((v for k, v in headers.items() if k.lower() == name), None)
    else:
        try:
            value = resolve_pointer(body, spec, None)
        except JsonPointerException:
            value = None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text[:200] if text else None
