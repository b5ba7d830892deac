"""Outside JSON the database can store: one check shared by every door.

PostgreSQL's ``text`` and ``jsonb`` cannot hold U+0000, no database driver can encode an unpaired
surrogate (``"\\ud800"``), and ``NaN`` or ``Infinity`` (also ``1e400``, which parses to infinity)
are not JSON, so SQLite's ``JSON_VALID`` check refuses them too. Left in, they fail the first
write with a 500 (on PostgreSQL only, for NUL), possibly halfway through a request. Every door
(webhook, API, inbox forms, AG-UI) checks its parsed input here first and refuses it with a 400
(AG-UI: RUN_ERROR ``input_invalid`` after RUN_STARTED, as its other refusals).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["UnstorableValueError", "check_storable", "loads", "refuse_constant"]


class UnstorableValueError(ValueError):
    """A value outside input may not hold; ``path`` leads to it, ``problem`` says what it is."""

    def __init__(self, path: list[str | int], problem: str) -> None:
        self.path = path
        self.problem = problem
        self.message = f"{_dotted(path)} {problem}" if path else problem[:1].upper() + problem[1:]
        super().__init__(self.message)

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The refusal as field errors: ``[{"path": [...], "message": str}]``."""
        return [{"path": self.path, "message": self.message}]


def _dotted(path: list[str | int]) -> str:
    return ".".join(str(part) for part in path)


def _string_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate"
    return None


def check_storable(value: Any, path: list[str | int] | None = None) -> None:
    """Refuse NUL characters and unpaired surrogates in strings (keys too) and non-finite numbers.

    Iterative, so that the deepest nesting ``json.loads`` accepts cannot exhaust the stack.

    Raises:
        UnstorableValueError: the first such value found, with its path.
    """
    stack: list[tuple[Any, list[str | int]]] = [(value, list(path or []))]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            problem = _string_problem(item)
            if problem is not None:
                raise UnstorableValueError(where, problem)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise UnstorableValueError(where, "is not a finite number")
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str):
                    problem = _string_problem(key)
                    if problem is not None:
                        raise UnstorableValueError(where, f"has a key that {problem}")
                stack.append((child, [*where, key]))
        elif isinstance(item, list | tuple):
            stack.extend((child, [*where, index]) for index, child in enumerate(item))


def refuse_constant(name: str) -> None:
    """``json.loads``' ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes) -> Any:
    """Strict ``json.loads``: no ``NaN``/``Infinity`` literals, and the result passes :func:`check_storable`.

    Raises:
        UnstorableValueError: the JSON holds a value that cannot be stored (a ``ValueError``).
        ValueError: not JSON (also ``RecursionError`` for nesting too deep to parse).
    """
    data = json.loads(text, parse_constant=refuse_constant)
    check_storable(data)
    return data
