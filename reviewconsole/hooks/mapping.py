"""An endpoint's optional input mapping: build the workflow's input from fields of the body."""

from __future__ import annotations

from typing import Any

__all__ = ["MISSING", "map_input"]


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
