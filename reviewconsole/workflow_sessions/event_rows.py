"""An event row's ``data``: the event's ADK session JSON without what the row's columns hold.

An ``Event`` row keeps the event's ``id`` (``event_id``), ``invocationId``, ``author``,
``branch`` (when not empty), ``timestamp`` and ``nodeInfo.path`` (``node_path``) in columns, so
its ``data`` holds only the rest: ``content``, ``actions``, ``longRunningToolIds``, the other
``nodeInfo`` keys (``outputFor``…), ``output``, ``errorCode``… (:func:`stored_data`).
:func:`event_json` puts the columns back, in the engine's key order, so every reader sees the JSON
``engine.Event.to_json()`` gave. A row written whole (before this form; its ``data`` has ``id``)
reads as it is.

Readers that look only at ``content``, ``actions``, ``output`` or ``partial`` may read ``data``
as it is; a reader of the whole event uses :data:`COLUMNS` and :func:`event_json`.
"""

from __future__ import annotations

from typing import Any

import engine

__all__ = ["COLUMNS", "event_json", "stored_data"]

COLUMNS = ("event_id", "invocation_id", "author", "branch", "timestamp", "node_path", "data")
"""The ``Event`` fields :func:`event_json` takes, in its argument order (for ``values_list``)."""

_ORDER = tuple(field.alias or name for name, field in engine.Event.model_fields.items())
_IN_COLUMNS = ("id", "invocationId", "author", "timestamp")


def stored_data(event: engine.Event) -> dict[str, Any]:
    """``event.to_json()`` without the keys the row's columns hold (what ``Event.data`` stores)."""
    data = event.to_json()
    for key in _IN_COLUMNS:
        data.pop(key, None)
    if data.get("branch"):  # an empty branch stays: the column cannot tell "" from none
        del data["branch"]
    info = {key: value for key, value in data.pop("nodeInfo", {}).items() if key != "path"}
    if info:
        data["nodeInfo"] = info
    return data


def event_json(
    event_id: str, invocation_id: str, author: str, branch: str, timestamp: float, node_path: str, data: dict[str, Any]
) -> dict[str, Any]:
    """The event's ADK session JSON from its row's :data:`COLUMNS` (as ``engine.Event.to_json()``
    gave it); a row whose ``data`` is the whole JSON (it has ``id``) is returned as it is."""
    if "id" in data:
        return data
    whole = dict(data)
    whole.update(id=event_id, invocationId=invocation_id, author=author, timestamp=timestamp)
    if branch:
        whole["branch"] = branch
    whole["nodeInfo"] = {"path": node_path, **(data.get("nodeInfo") or {})}
    ordered = {key: whole.pop(key) for key in _ORDER if key in whole}
    ordered.update(whole)
    return ordered
