"""Session state as a node sees it: reads see the node's own unflushed writes first.

Keys follow ADK's prefixes (``sessions/state.py``): ``app:`` keys are shared by every session of
the app, ``user:`` keys by every session of the same user and app, ``temp:`` keys live only for
the current invocation and are never stored. Other keys belong to the session.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

__all__ = ["APP_PREFIX", "TEMP_PREFIX", "USER_PREFIX", "State", "split_delta"]

APP_PREFIX = "app:"
USER_PREFIX = "user:"
TEMP_PREFIX = "temp:"


class State(MutableMapping[str, Any]):
    """A read-through view of ``base`` (the session's live state) plus pending writes.

    Writes go to ``delta`` and reach the session when the node's next event is emitted.
    Deleting a key is not supported (ADK has no delete either): set it to ``None``.
    """

    __slots__ = ("_base", "delta")

    def __init__(self, base: dict[str, Any], delta: dict[str, Any] | None = None) -> None:
        self._base = base
        self.delta: dict[str, Any] = delta if delta is not None else {}
        """Writes not yet carried by an event."""

    def __getitem__(self, key: str) -> Any:
        if key in self.delta:
            return self.delta[key]
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.delta[key] = value

    def __delitem__(self, key: str) -> None:
        raise TypeError("State keys cannot be deleted; set the key to None instead.")

    def __contains__(self, key: object) -> bool:
        return key in self.delta or key in self._base

    def __iter__(self) -> Iterator[str]:
        yield from self.delta
        yield from (k for k in self._base if k not in self.delta)

    def __len__(self) -> int:
        return len(self._base.keys() | self.delta.keys())

    def to_dict(self) -> dict[str, Any]:
        """A plain copy of the current values."""
        return {**self._base, **self.delta}


def split_delta(delta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Split a state delta into (session keys, ``app:`` keys, ``user:`` keys); ``temp:`` keys are dropped."""
    session: dict[str, Any] = {}
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    for key, value in delta.items():
        if ":" not in key:  # no prefix: most keys
            session[key] = value
        elif key.startswith(TEMP_PREFIX):
            continue
        elif key.startswith(APP_PREFIX):
            app[key] = value
        elif key.startswith(USER_PREFIX):
            user[key] = value
        else:
            session[key] = value
    return session, app, user
