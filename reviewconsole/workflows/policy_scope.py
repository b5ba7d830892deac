"""What an approval rule of a workflow may refer to: its tool, and the fields its conditions read.

A rule names a tool of the workflow (or ``*``) and reads two roots (``conditions.py``):

- ``args``: the call's arguments, declared by the tool's parameters (``BaseTool.parameters()``,
  the JSON Schema the model is given and edited arguments are checked against). For ``*``, the
  arguments of any of the workflow's tools: a field is declared when one of them declares it.
- ``state``: the session's state, declared by the workflow's ``state_schema`` (an engine
  ``Workflow``'s pydantic model of its state keys, the nearest one to the root). A workflow
  without one (e.g. an ``LlmAgent`` root, whose state any tool may write) declares nothing, so
  ``state.…`` is not checked there: :func:`unchecked_state` says so, and the admin shows it.

The tools are found by walking the workflow as ``build(None)`` makes it: agents' tools (also
those of task-mode sub-agents and of agents inside node tools), a graph's nodes, a handoff
group's agents, a parallel worker's node. A workflow whose build raises, or that has no tool to
find (its tools made while it runs), has its rules' tool and ``args`` left unchecked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from engine import BaseNode, BaseTool, HandoffGroup, LlmAgent, ParallelWorker, Workflow

from . import WorkflowSpec
from .condition_names import Root, Schema, read
from .conditions import UNCHECKED, rule_error

__all__ = ["roots_for", "spec_rule_error", "state_schema_of", "tools_of", "unchecked_state"]


def _nodes(root: BaseNode) -> Iterator[BaseNode]:
    todo, seen = [root], set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, Workflow):
            todo += list(node.graph.nodes.values())
        elif isinstance(node, HandoffGroup):
            todo += list(node.agents.values())
        elif isinstance(node, ParallelWorker):
            todo.append(node.node)
        elif isinstance(node, LlmAgent):
            todo += [t.node for t in node.tools if isinstance(getattr(t, "node", None), BaseNode)]


def tools_of(root: BaseNode) -> dict[str, BaseTool]:
    """Every tool of the workflow ``root``, by name (the first found of a name)."""
    found: dict[str, BaseTool] = {}
    for node in _nodes(root):
        if isinstance(node, LlmAgent):
            for tool in node.tools:
                found.setdefault(tool.name, tool)
    return found


def state_schema_of(root: BaseNode) -> Any:
    """The pydantic model of the workflow's state keys (the ``state_schema`` of ``root`` or of the
    first graph below it that has one), or None when it declares none."""
    for node in _nodes(root):
        schema = getattr(node, "state_schema", None) if isinstance(node, Workflow) else None
        if schema is not None:
            return schema
    return None


def _built(spec: WorkflowSpec) -> BaseNode | None:
    try:
        root = spec.build(None)
    except Exception:  # the author's builder: the registry reports it (E006); nothing to check against
        return None
    return root if isinstance(root, BaseNode) else None


def roots_for(spec: WorkflowSpec, tool: str) -> tuple[Mapping[str, Root], str | None]:
    """What a rule of ``spec`` for ``tool`` may read (``args``, ``state``), and the error when
    ``tool`` is not a tool of the workflow (then the roots are unchecked)."""
    root = _built(spec)
    if root is None:
        return UNCHECKED, None
    tools = tools_of(root)
    model = state_schema_of(root)
    state = Root((Schema.of(model.model_json_schema()),), "the keys of its state_schema") if model else Root()
    if not tools:
        return {"args": Root(), "state": state}, None
    if tool == "*":
        schemas = tuple(Schema.of(t.parameters()) for t in tools.values())
        return {"args": Root(schemas, "the parameters of its tools"), "state": state}, None
    if tool not in tools:
        return UNCHECKED, (
            f"tool {tool!r} is not a tool of workflow {spec.name!r} (its tools: {', '.join(sorted(tools))}; "
            "or '*' for every tool)."
        )
    return {"args": Root((Schema.of(tools[tool].parameters()),), f"the parameters of {tool}"), "state": state}, None


def spec_rule_error(
    spec: WorkflowSpec, *, name: str, tool: str, when: str, decide: str | None, four_eyes_over: str | None
) -> str | None:
    """:func:`~.conditions.rule_error` for a rule of ``spec``, its conditions checked against what
    they may read (:func:`roots_for`) and its tool against the workflow's tools."""
    rule = {"name": name, "tool": tool, "when": when, "decide": decide, "four_eyes_over": four_eyes_over}
    problem = rule_error(**rule)  # type: ignore[arg-type]
    if problem is not None:
        return problem
    roots, problem = roots_for(spec, tool)
    if problem is not None:
        return f"Approval policy {name!r}: {problem}"
    return rule_error(**rule, roots=roots)  # type: ignore[arg-type]


def unchecked_state(spec: WorkflowSpec, *conditions: str | None) -> bool:
    """Whether one of ``conditions`` reads ``state`` while ``spec`` declares no ``state_schema``
    (so its state names could not be checked)."""
    root = _built(spec)
    if root is not None and state_schema_of(root) is not None:
        return False
    return any(text and "state" in read(text, UNCHECKED).roots for text in conditions)
