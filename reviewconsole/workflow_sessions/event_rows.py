"""An event row's ``data``: the event's ADK session JSON without what the row's columns hold.

An ``Event`` row keeps the event's ``id`` (``event_id``), ``invocationId``, ``author``,
``branch`` (when not empty), ``timestamp`` and ``nodeInfo.path`` (``node_path``) in columns, so
its ``data`` holds only the rest: ``content``, ``actions``, ``longRunningToolIds``, the other
``nodeInfo`` keys (``outputFor``…), ``output``, ``errorCode``… (:func:`stored_data`). A state
delta whose every value is the event's text (an agent's ``output_key``: a draft) is not written
twice: ``data`` holds its keys under :data:`TEXT_STATE` instead of ``actions.stateDelta``.
:func:`event_json` puts the columns back, in the engine's key order, so every reader sees the JSON
``engine.Event.to_json()`` gave. A row written whole (before this form; its ``data`` has ``id``)
reads as it is.

Readers that look only at ``content``, ``output`` or ``partial`` may read ``data`` as it is; a
reader of ``actions`` or of the whole event uses :data:`COLUMNS` and :func:`event_json`.
"""

from __future__ import annotations

from typing import Any

import engine

__all__ = ["COLUMNS", "TEXT_STATE", "event_json", "stored_data"]

COLUMNS = ("event_id", "invocation_id", "author", "branch", "timestamp", "node_path", "data")
"""The ``Event`` fields :func:`event_json` takes, in its argument order (for ``values_list``)."""

TEXT_STATE = "_stateDeltaIsText"
"""The ``data`` key listing the state delta's keys whose value is the event's text (not an ADK key)."""

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
    actions = data.get("actions") or {}
    delta = actions.get("stateDelta")
    text = _text(data)
    if delta and text and all(value == text for value in delta.values()):
        data[TEXT_STATE] = list(delta)
        del actions["stateDelta"]
        if not actions:
            del data["actions"]
    return data


def _text(data: dict[str, Any]) -> str:
    """The concatenated text parts of an event's JSON ('' when there are none), as ``Event.text``."""
    parts = (data.get("content") or {}).get("parts") or []
    return "".join(part["text"] for part in parts if part.get("text") is not None)


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
    keys = whole.pop(TEXT_STATE, None)
    if keys:
        text = _text(data)
        whole["actions"] = {"stateDelta": dict.fromkeys(keys, text), **(data.get("actions") or {})}
    ordered = {key: whole.pop(key) for key in _ORDER if key in whole}
    ordered.update(whole)
    return ordered
