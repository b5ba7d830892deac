"""A picture of a session's workflow: Mermaid flowchart text from the engine's graph.

For a :class:`engine.Workflow` root: START, every node, every edge with its route label (loops
included, as the graph has them); for an :class:`engine.LlmAgent` root: the agent and its tools
(dashed edges; a workflow used as a tool is marked so). The nodes the session has run are drawn
as taken, the edges between consecutive runs as the path, and the nodes its pending interrupts
wait on as waiting. An agent's tool calls have explicit states (:func:`tool_runs`): a tool that
ran is taken, through to the session's end; one whose call awaits a person's confirmation is
drawn as waiting ("awaiting confirmation", never as declined); one a reviewer declined is drawn
as declined (it was asked for and never ran). The page renders the text with the ``mermaid`` npm package
(``static/vendor/mermaid``); without it, the text and :attr:`Picture.steps` stay readable.

Node names come from code, not from an LLM or a caller; labels are quoted and escaped anyway.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine import DEFAULT_ROUTE, START, BaseNode, LlmAgent, LongRunningFunctionTool, Workflow

from ...workflows import UnknownWorkflowError, get

__all__ = ["ASKED", "DECLINED", "RAN", "Picture", "node_names", "picture_for_session", "tool_runs"]

_RUN_SUFFIX = re.compile(r"@[^/]*$")


@dataclass
class Picture:
    """``mermaid``: the flowchart text; ``steps``: node (and tool) names in the order they ran (for
    text); ``waiting``: where its pending interrupts wait; ``asked``: tools whose call awaits a
    person's confirmation (drawn as waiting, listed apart); ``declined``: tools asked for that never ran;
    ``ended``: the session has ended."""

    mermaid: str
    steps: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    ended: bool = False


@functools.cache
def _root(workflow: str) -> BaseNode | None:
    try:
        return get(workflow).build(None)
    except UnknownWorkflowError:
        return None


def node_names(path: str) -> list[str]:
    """``"email_review@1/draft_email@2"`` → ``["email_review", "draft_email"]``."""
    return [_RUN_SUFFIX.sub("", part) for part in path.split("/") if part]


_ASKS = ("adk_request_confirmation", "adk_request_input", "adk_request_credential")
"""Function calls that ask a person (or a client) rather than run a tool."""

RAN, ASKED, DECLINED = "ran", "asked", "declined"
"""A tool call's state in :func:`tool_runs`: it ran; it waits for a person's confirmation (asked);
it did not run (a reviewer declined it, or it failed)."""


def _parts(data: Any) -> list[Any]:
    content = data.get("content") if isinstance(data, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def tool_runs(event_data: Iterable[Any]) -> list[tuple[str, str]]:
    """``(tool name, state)`` for each tool call answered in events' ``data`` (ADK event JSON), in
    the order of its first response; ``state`` (:data:`RAN`, :data:`ASKED`, :data:`DECLINED`) is
    its last response's. A response that is only ``{"error": …}`` to a call an
    ``adk_request_confirmation`` asks about is ``asked`` while it is that call's only response
    (ADK's "requires confirmation"), ``declined`` otherwise; any other response ``ran`` (a
    long-running tool's "pending" too: it ran). Calls without an id count one by one."""
    asked: set[str] = set()
    runs: dict[Any, tuple[str, str]] = {}
    for data in event_data:
        for n, part in enumerate(_parts(data)):
            if not isinstance(part, dict):
                continue
            call = part.get("functionCall")
            if isinstance(call, dict) and call.get("name") == "adk_request_confirmation":
                original = (call.get("args") or {}).get("originalFunctionCall")
                if isinstance(original, dict) and original.get("id"):
                    asked.add(str(original["id"]))
            response = part.get("functionResponse")
            if not isinstance(response, dict) or response.get("name") in _ASKS or not response.get("name"):
                continue
            body, call_id = response.get("response"), response.get("id")
            key = str(call_id) if call_id else (len(runs), n)
            if not (isinstance(body, dict) and set(body) == {"error"}):
                state = RAN
            elif key in asked and key not in runs:
                state = ASKED
            else:
                state = DECLINED
            runs[key] = (str(response["name"]), state)
    return list(runs.values())


def _label(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;") + '"'


def _route_label(route: Any) -> str:
    if route is None:
        return ""
    if route == DEFAULT_ROUTE:
        return "otherwise"
    if isinstance(route, list):
        return " / ".join(_route_label(r) for r in route)
    return str(route).lower() if isinstance(route, bool) else str(route)


class _Ids:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self.ids:
            self.ids[name] = f"n{len(self.ids)}"
        return self.ids[name]


def _steps(root: BaseNode, paths: list[str]) -> list[str]:
    """The root's children in the order they ran (a repeat only when another node ran between)."""
    steps: list[str] = []
    for path in paths:
        names = node_names(path)
        if not names or names[0] != root.name:
            continue
        step = names[1] if len(names) > 1 else names[0]
        if not steps or steps[-1] != step:
            steps.append(step)
    return steps


def _workflow_lines(root: Workflow, ids: _Ids, steps: list[str]) -> tuple[list[str], list[int]]:
    graph = root.graph
    lines = [f"  {ids(START)}(({_label('START')}))"]
    for name, node in graph.nodes.items():
        shape = "([{}])" if isinstance(node, LlmAgent) else "[{}]"
        lines.append(f"  {ids(name)}{shape.format(_label(name))}")
    walked = set(zip([START, *steps], steps, strict=False))
    taken_links: list[int] = []
    link = 0
    for target in graph.start_targets:
        lines.append(f"  {ids(START)} --> {ids(target)}")
        if (START, target) in walked:
            taken_links.append(link)
        link += 1
    for source, targets in graph.edges.items():
        for target, route in targets:
            label = _route_label(route)
            arrow = f" -->|{_label(label)}| " if label else " --> "
            lines.append(f"  {ids(source)}{arrow}{ids(target)}")
            if (source, target) in walked:
                taken_links.append(link)
            link += 1
    return lines, taken_links


def _agent_lines(root: LlmAgent, ids: _Ids, steps: list[str]) -> tuple[list[str], list[int]]:
    """The agent and its tools; the links to what ran (link 0: START → agent; link n: tool n)."""
    lines = [f"  {ids(START)}(({_label('START')})) --> {ids(root.name)}([{_label(root.name + ' (agent)')}])"]
    taken_links = [0] if root.name in steps else []
    for link, tool in enumerate(root.tools, 1):
        if tool.name in steps:
            taken_links.append(link)
        inner = getattr(tool, "node", None)
        if isinstance(inner, Workflow):
            suffix = " (workflow)"
        elif inner is not None:
            suffix = " (node)"
        elif isinstance(tool, LongRunningFunctionTool):
            suffix = " (long-running)"
        else:
            suffix = ""
        lines.append(f"  {ids(root.name)} -.->|{_label('tool')}| {ids(tool.name)}[{_label(tool.name + suffix)}]")
    return lines, taken_links


def picture_for_session(
    workflow: str,
    event_paths: list[str],
    waiting: list[tuple[str, str]],
    tools: list[tuple[str, str]] | None = None,
    *,
    ended: bool = False,
) -> Picture | None:
    """The picture of a session of ``workflow`` (None if the workflow is not registered).

    ``event_paths``: the node paths of its events, in order; ``waiting``: ``(node path,
    function name)`` of its pending interrupts (the function names a tool awaiting approval);
    ``tools``: :func:`tool_runs` of its events; ``ended``: the session has ended (nothing
    awaits confirmation then).
    """
    root = _root(workflow)
    if root is None:
        return None
    ids = _Ids()
    steps = _steps(root, event_paths)
    declined: list[str] = []
    asked: list[str] = []
    if isinstance(root, LlmAgent):
        own = {t.name for t in root.tools}
        ran = [name for name, state in tools or [] if state == RAN and name in own]
        steps = list(dict.fromkeys([*steps, *ran]))
        if not ended:
            asked = list(dict.fromkeys(name for name, state in tools or [] if state == ASKED and name in own))
        declined = list(
            dict.fromkeys(
                name
                for name, state in tools or []
                if state == DECLINED and name in own and name not in ran and name not in asked
            )
        )
    waiting_nodes: list[str] = [*asked]
    for path, function in waiting:
        names = node_names(path)
        if len(names) > 1:
            waiting_nodes.append(names[1])
        elif names:
            waiting_nodes.append(names[0])
        if isinstance(root, LlmAgent) and function in {t.name for t in root.tools}:
            waiting_nodes.append(function)
    lines = ["flowchart TD"]
    taken_links: list[int] = []
    if isinstance(root, Workflow):
        body, taken_links = _workflow_lines(root, ids, steps)
        lines += body
    elif isinstance(root, LlmAgent):
        body, taken_links = _agent_lines(root, ids, steps)
        lines += body
    else:
        lines.append(f"  {ids(START)}(({_label('START')})) --> {ids(root.name)}[{_label(root.name)}]")
    lines += [
        "  classDef taken fill:#e3f4e8,stroke:#1e7d3b,color:#1d2330",
        "  classDef waiting fill:#fff4d6,stroke:#b36b00,stroke-width:3px,color:#1d2330",
        "  classDef declined fill:#fdeceb,stroke:#b3261e,stroke-dasharray:4 3,color:#1d2330",
    ]
    taken = [ids.ids[s] for s in dict.fromkeys(steps) if s in ids.ids and s not in waiting_nodes]
    if taken:
        lines.append(f"  class {','.join(taken)} taken")
    marked = [ids.ids[w] for w in dict.fromkeys(waiting_nodes) if w in ids.ids]
    if marked:
        lines.append(f"  class {','.join(marked)} waiting")
    refused = [ids.ids[d] for d in declined if d in ids.ids and d not in waiting_nodes]
    if refused:
        lines.append(f"  class {','.join(refused)} declined")
    for link in taken_links:
        lines.append(f"  linkStyle {link} stroke:#1e7d3b,stroke-width:3px")
    return Picture(
        mermaid="\n".join(lines),
        steps=steps,
        waiting=[w for w in dict.fromkeys(waiting_nodes) if w not in asked],
        asked=asked,
        declined=declined,
        ended=ended,
    )
