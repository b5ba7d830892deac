"""A readable timeline of a session's events, for the admin and the detail page.

Each row: when, who (the author; for a person's answer also the user who decided), where (node
path, branch), what (text, function call or response, output, error), the state change and the
route. A person's answer also carries the decision it recorded: what was decided, the reason or
comment given, and the reviewer's edit to the draft. When a state key that held text before gets
a new text (a revised draft), the row also carries a word diff against the previous value.
The comments on the session's items (hand-off notes, and the notes of a defer, return, escalation
or cancel: ``inbox.models.Comment``) are rows too, in time order among the events
(``comment_kind`` set, ``seq`` 0), and so is each four-eyes first approval (``comment_kind``
"First approval"; the second approval's decision names both approvers). Everything is data for templates, escaped there.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from ..inbox.items.approvals import first_approvals
from ..inbox.models import Comment
from ..inbox.pages.drafts import DiffLine, parse_unified
from ..workflow_sessions.models import WorkflowSession

__all__ = ["Decision", "Revision", "TimelineRow", "decisions_by_interrupt", "revision_diff", "timeline"]


@dataclass
class Revision:
    """A text state key that changed: ``parts`` are ``(op, text)`` with op ``=``, ``+`` or ``-``."""

    key: str
    parts: list[tuple[str, str]]

    @property
    def shown(self) -> list[tuple[str, str]]:
        """The parts as the page shows them: a space (op ``" "``) between deleted words and the
        words inserted in their place, so "for" → "about" reads "for about", not "forabout"."""
        out: list[tuple[str, str]] = []
        for op, text in self.parts:
            if op == "+" and out and out[-1][0] == "-" and not out[-1][1][-1:].isspace() and not text[:1].isspace():
                out.append((" ", " "))
            out.append((op, text))
        return out


_WORDS = re.compile(r"\s+|[^\s]+")


def revision_diff(old: str, new: str, limit: int = 4000) -> list[tuple[str, str]]:
    """A word-level diff of two texts as ``(op, text)`` runs (each text cut to ``limit`` characters)."""
    a, b = _WORDS.findall(old[:limit]), _WORDS.findall(new[:limit])
    parts: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            parts.append(("+", "".join(b[j1:j2])))
    return parts


@dataclass
class Decision:
    """What a person's answer decided: ``decision`` (approve, reject…), who, the reason or comment
    they gave, and their edit to the draft or the arguments (``edits``: diff lines, empty when not
    edited); ``decided_at`` when; ``call`` the tool call decided on as it ran or would have run
    (``name(args)``, the edited arguments for an edit; ``""`` for other requests) and
    ``args_digest`` the digest of the arguments approved (``engine._digest``)."""

    interrupt_id: str
    decision: str
    decided_by: str
    reason: str
    edits: list[DiffLine] = field(default_factory=list)
    decided_at: dt.datetime | None = None
    call: str = ""
    args_digest: str = ""


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
    revisions: list[Revision]
    decisions: list[Decision] = field(default_factory=list)
    comment_kind: str = ""
    """For a comment's row: its kind's label ("Comment", "Deferred", "Escalated"…)."""


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


def decisions_by_interrupt(session: WorkflowSession) -> dict[str, deque[Decision]]:
    """The session's decisions per interrupt id, oldest first (a reopened interrupt has several)."""
    found: dict[str, deque[Decision]] = defaultdict(deque)
    decided = session.items.filter(status="resolved").order_by("decided_at", "id")
    fields = ("interrupt_id", "decision", "decided_by_label", "reason", "edit_diff", "decided_at")
    for item in decided.only(*fields, "function_name", "payload", "response"):
        edits = parse_unified(item.edit_diff) if item.edit_diff else []
        call, digest = _call(item.payload, item.response, item.function_name)
        decision = Decision(item.interrupt_id, item.decision, item.decided_by_label, item.reason, edits)
        decision.decided_at, decision.call, decision.args_digest = item.decided_at, call, digest
        found[item.interrupt_id].append(decision)
    return found


def _call(payload: Any, response: Any, function_name: str) -> tuple[str, str]:
    """The tool call a decision was about (``name(args)``) and the approved arguments' digest."""
    if not isinstance(payload, dict) or not isinstance(payload.get("args"), dict):
        return "", ""
    answer = response if isinstance(response, dict) else {}
    args = answer.get("args") if isinstance(answer.get("args"), dict) else payload["args"]
    name = payload.get("tool") or function_name
    digest = answer.get("edited_args_digest") or answer.get("args_digest") or ""
    return f"{name}({_clip(args, 300)})", str(digest)


def _answered(data: dict[str, Any], decisions: dict[str, deque[Decision]]) -> list[Decision]:
    """The decisions a user's answer event delivered, in the order the answers were stored."""
    found = []
    for part in (data.get("content") or {}).get("parts", []):
        call_id = (part.get("functionResponse") or {}).get("id") if isinstance(part, dict) else None
        queue = decisions.get(call_id) if call_id else None
        if queue:
            found.append(queue.popleft() if len(queue) > 1 else queue[0])
    return found


def _side_row(at: dt.datetime, author: str, node_path: str, what: str, kind: str) -> TimelineRow:
    """A row beside the session's events (a comment, a first approval), ordered by its time."""
    return TimelineRow(
        seq=0,
        at=at,
        author=author,
        decided_by="",
        node_path=node_path,
        branch="",
        what=[what],
        state_delta={},
        route=None,
        revisions=[],
        comment_kind=kind,
    )


def _comment_rows(session: WorkflowSession) -> list[TimelineRow]:
    comments = Comment.objects.filter(item__session=session).select_related("item").order_by("created_at", "id")
    return [
        _side_row(
            c.created_at,
            c.author_label,
            c.item.node_path,
            f"on {c.item.interrupt_id}: {_clip(c.text)}",
            c.get_kind_display(),
        )
        for c in comments
    ]


def _first_approval_rows(session: WorkflowSession) -> list[TimelineRow]:
    rows = []
    for first in first_approvals(session.id):
        reason = f" (reason: {_clip(first.reason)})" if first.reason else ""
        what = f"on {first.interrupt_id}: approved, the first of two approvals{reason}"
        rows.append(_side_row(first.at, first.by, first.node_path, what, "First approval"))
    return rows


def timeline(session: WorkflowSession) -> list[TimelineRow]:
    """The session's events as timeline rows, in stored order, with its items' comments and first
    approvals among them by time (after every event stored at the same instant)."""
    rows = _event_rows(session)
    notes = deque(sorted([*_comment_rows(session), *_first_approval_rows(session)], key=lambda r: r.at))
    merged: list[TimelineRow] = []
    for row in rows:  # events keep their stored order; each comment goes before the first later event
        while notes and notes[0].at < row.at:
            merged.append(notes.popleft())
        merged.append(row)
    return [*merged, *notes]


def _event_rows(session: WorkflowSession) -> list[TimelineRow]:
    decisions = decisions_by_interrupt(session)
    rows = []
    texts: dict[str, str] = {}
    for event in session.events.order_by("seq"):
        data = event.adk_json()
        actions = data.get("actions") or {}
        revisions = []
        for key, value in (actions.get("stateDelta") or {}).items():
            if not isinstance(value, str):
                continue
            if key in texts and texts[key] != value:
                revisions.append(Revision(key, revision_diff(texts[key], value)))
            texts[key] = value
        # A person's answers are the user's events; a tool's own response to the same call id
        # (a long-running tool's "pending") is not a decision.
        answered = _answered(data, decisions) if event.author == "user" else []
        rows.append(
            TimelineRow(
                seq=event.seq,
                at=dt.datetime.fromtimestamp(event.timestamp, tz=dt.UTC),
                author=event.author,
                decided_by=", ".join(sorted({d.decided_by for d in answered if d.decided_by})),
                node_path=event.node_path,
                branch=event.branch,
                what=_describe(data),
                state_delta={k: _clip(v, 200) for k, v in (actions.get("stateDelta") or {}).items()},
                route=actions.get("route"),
                revisions=revisions,
                decisions=answered,
            )
        )
    return rows
