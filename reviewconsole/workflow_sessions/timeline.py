"""A readable timeline of a session's events, for the admin and the detail page.

Each row: when, who (the author; for a person's answer also the user who decided), where (node
path, branch), what (text, function call or response, output, error), the state change and the
route. Everything is data for templates, escaped there.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from .models import WorkflowSession

__all__ = ["TimelineRow", "timeline"]


@dataclass
class TimelineRow:
    seq: int
    at: dt.datetime
    author: str
    decided_by: str
    node_path: str
    branch: str
    what: list[str]
    state_delta: dict[str, Any]
    route: Any


def _clip(value: Any, limit: int = 600) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(data: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for part in (data.get("content") or {}).get("parts", []):
        if "text" in part:
            lines.append(_clip(part["text"]))
        if "functionCall" in part:
            call = part["functionCall"]
            lines.append(f"calls {call.get('name')} [{call.get('id')}] {_clip(call.get('args', {}))}")
        if "functionResponse" in part:
            resp = part["functionResponse"]
            lines.append(f"response to {resp.get('name')} [{resp.get('id')}]: {_clip(resp.get('response'))}")
    if "output" in data:
        lines.append(f"output: {_clip(data['output'])}")
    if data.get("errorCode"):
        lines.append(f"error {data['errorCode']}: {data.get('errorMessage', '')}")
    return lines


def timeline(session: WorkflowSession) -> list[TimelineRow]:
    """The session's events as timeline rows, in stored order."""
    deciders = dict(session.interrupts.exclude(decided_by_label="").values_list("interrupt_id", "decided_by_label"))
    rows = []
    for event in session.events.order_by("seq"):
        actions = event.data.get("actions") or {}
        answered = [
            part["functionResponse"].get("id")
            for part in (event.data.get("content") or {}).get("parts", [])
            if "functionResponse" in part
        ]
        rows.append(
            TimelineRow(
                seq=event.seq,
                at=dt.datetime.fromtimestamp(event.timestamp, tz=dt.UTC),
                author=event.author,
                decided_by=", ".join(sorted({deciders[i] for i in answered if i in deciders})),
                node_path=event.node_path,
                branch=event.branch,
                what=_describe(event.data),
                state_delta={k: _clip(v, 200) for k, v in (actions.get("stateDelta") or {}).items()},
                route=actions.get("route"),
            )
        )
    return rows
