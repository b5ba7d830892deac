"""Workflow graphs: edge items, route matching and validation.

An edge item (ADK 2.x, ``workflow/_graph.py`` and ``utils/_graph_parser.py``) is either an
:class:`Edge` or a *chain* tuple ``(a, b, c)`` meaning ``a → b → c``. A chain element is a node
(anything :func:`engine.as_node` accepts), the string ``"START"``, the name of a node defined
elsewhere in the graph, a tuple of nodes (fan-out: every one is triggered), or a *route dict*
``{route: node | tuple}``: the edge into each target fires only when the source node emitted
that route. Routes are ``str``, ``bool`` or ``int`` values, or lists of them.
``DEFAULT_ROUTE`` fires when no routed edge of the source matched. A node with routed edges
none of which match ends its branch.

Routes match by value *and* type: route ``True`` does not fire an edge tagged ``1`` (ADK, which
compares with ``==``, would fire it).

Validation happens at construction and raises :class:`~engine.GraphError` naming the problem:
unconditional cycles, duplicate node names, a node named START, nodes unreachable from START,
edges into START, routes on START edges, duplicate edges, unknown route targets, DEFAULT_ROUTE
inside a list, and a schema mismatch on an edge (the source's ``output_schema`` is not the
target's ``input_schema``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._errors import GraphError

if TYPE_CHECKING:
    from ._node import BaseNode

__all__ = ["DEFAULT_ROUTE", "START", "Edge", "Graph", "RouteValue"]

START = "START"
"""The entry of a workflow: the first element of its first chain."""
DEFAULT_ROUTE = "__DEFAULT__"
"""A route key that fires only when no other routed edge of the source node matched."""

RouteValue = str | bool | int


@dataclass(frozen=True)
class Edge:
    """A directed edge; ``route`` is None (always fires), a route value, or a list of them."""

    from_node: Any
    to_node: Any
    route: Any = None


def _route_set(route: Any) -> frozenset[Any]:
    values = route if isinstance(route, list) else [route]
    # bool is a subclass of int: keep True and 1 apart by pairing values with their type.
    return frozenset((type(v), v) for v in values)


_DEFAULT: frozenset[Any] = frozenset({DEFAULT_ROUTE})
"""Marks a ``DEFAULT_ROUTE`` edge in :attr:`Graph._accepts` (compared by identity)."""


@dataclass
class Graph:
    """A validated graph of named nodes.

    ``edges`` maps a source name to its outgoing ``(target name, route)`` pairs, in declaration
    order; ``terminal`` holds the names of nodes with no outgoing edge.
    """

    nodes: dict[str, BaseNode]
    edges: dict[str, list[tuple[str, Any]]]
    start_targets: list[str]
    terminal: frozenset[str]
    predecessors: dict[str, list[str]] = field(default_factory=dict)
    _accepts: dict[str, list[tuple[str, frozenset[Any] | None]]] = field(init=False, repr=False, compare=False)
    """Per source, each edge's target and the routes it fires on (:func:`_route_set`; None: always;
    ``_DEFAULT``: when no routed edge matched), worked out once rather than on every completion."""

    def __post_init__(self) -> None:
        self._accepts = {
            source: [
                (target, None if route is None else _DEFAULT if route == DEFAULT_ROUTE else _route_set(route))
                for target, route in out
            ]
            for source, out in self.edges.items()
        }

    def next_nodes(self, name: str, route: Any) -> list[str]:
        """Targets to trigger after ``name`` finished having emitted ``route`` (None for none)."""
        out = self._accepts.get(name)
        if not out:
            return []
        if route is None:
            emitted: Any = ()
        else:
            emitted = _route_set(route) if isinstance(route, list) else ((type(route), route),)
        targets: list[str] = []
        defaults: list[str] = []
        matched = False
        for target, accepts in out:
            if accepts is None:
                targets.append(target)
            elif accepts is _DEFAULT:
                defaults.append(target)
            elif not accepts.isdisjoint(emitted):
                targets.append(target)
                matched = True
        if not matched:
            targets.extend(defaults)
        return targets

    def routes_of(self, name: str) -> list[Any]:
        """The route labels on edges leaving ``name`` (None for unconditional edges)."""
        return [route for _, route in self.edges.get(name, [])]


def build_graph(items: Sequence[Any], as_node: Callable[[Any], BaseNode]) -> Graph:
    """Parse and validate edge items; ``as_node`` turns a node-like value into a node."""
    by_identity: dict[int, BaseNode] = {}
    named: dict[str, BaseNode] = {}
    references: list[str] = []

    def resolve(value: Any) -> str:
        if isinstance(value, str):
            if value == START:
                return START
            references.append(value)
            return value
        node = by_identity.get(id(value))
        if node is None:
            node = as_node(value)
            if node.name in (START, "__START__"):
                raise GraphError(f"A node cannot be named {node.name!r}: the name is reserved for the entry.")
            by_identity[id(value)] = node
            existing = named.get(node.name)
            if existing is not None and existing is not node:
                raise GraphError(f"Duplicate node name {node.name!r}: two different nodes share it.")
            named[node.name] = node
        return node.name

    raw: list[tuple[str, str, Any]] = []

    def flatten(element: Any) -> list[Any]:
        if isinstance(element, dict):
            flat: list[Any] = []
            for target in element.values():
                flat.extend(target if isinstance(target, tuple) else [target])
            return flat
        if isinstance(element, tuple):
            return list(element)
        return [element]

    for item in items:
        if isinstance(item, Edge):
            raw.append((resolve(item.from_node), resolve(item.to_node), item.route))
            continue
        if not isinstance(item, tuple) or len(item) < 2:
            raise GraphError(f"An edge item must be an Edge or a chain tuple of two or more elements, got {item!r}.")
        for source, target in itertools.pairwise(item):
            if isinstance(target, dict):
                if isinstance(source, dict):
                    raise GraphError("Two route dicts in a row in one chain: split them into separate edge items.")
                if not target:
                    raise GraphError("A route dict must map at least one route to a node.")
                for route, dest in target.items():
                    if not isinstance(route, str | bool | int):
                        raise GraphError(f"Route {route!r} must be a str, bool or int.")
                    for src in flatten(source):
                        for dst in dest if isinstance(dest, tuple) else (dest,):
                            raw.append((resolve(src), resolve(dst), route))
            else:
                for src in flatten(source):
                    for dst in flatten(target):
                        raw.append((resolve(src), resolve(dst), None))

    for ref in references:
        if ref not in named:
            raise GraphError(f"Unknown route target {ref!r}: no node with that name is in the graph.")
    return _validate(named, raw)


def _validate(named: dict[str, BaseNode], raw: list[tuple[str, str, Any]]) -> Graph:
    if not raw:
        raise GraphError("A workflow needs at least one edge from START.")
    seen: set[tuple[str, str, frozenset[Any] | None]] = set()
    edges: dict[str, list[tuple[str, Any]]] = {}
    start_targets: list[str] = []
    predecessors: dict[str, list[str]] = {}
    for source, target, route in raw:
        if target == START:
            raise GraphError(f"Edge {source!r} → START: nothing may lead into START.")
        if source == START and route is not None:
            raise GraphError(f"Edge START → {target!r} has route {route!r}: START edges cannot be routed.")
        if isinstance(route, list):
            if not route:
                raise GraphError(f"Edge {source!r} → {target!r} has an empty route list.")
            if DEFAULT_ROUTE in route:
                raise GraphError(f"Edge {source!r} → {target!r}: DEFAULT_ROUTE cannot be part of a route list.")
        key = (source, target, _route_set(route) if route is not None else None)
        if key in seen:
            raise GraphError(f"Duplicate edge {source!r} → {target!r} (route {route!r}).")
        seen.add(key)
        if source == START:
            start_targets.append(target)
        else:
            edges.setdefault(source, []).append((target, route))
        preds = predecessors.setdefault(target, [])
        if source not in preds:
            preds.append(source)
    if not start_targets:
        raise GraphError("No edge leaves START: the workflow has no entry.")

    reachable: set[str] = set()
    stack = list(start_targets)
    while stack:
        name = stack.pop()
        if name in reachable:
            continue
        reachable.add(name)
        stack.extend(t for t, _ in edges.get(name, []))
    unreachable = sorted(set(named) - reachable)
    if unreachable:
        raise GraphError(f"Nodes unreachable from START: {', '.join(unreachable)}.")

    _check_unconditional_cycles(edges)
    _check_edge_schemas(named, edges)
    terminal = frozenset(name for name in named if not edges.get(name))
    return Graph(nodes=named, edges=edges, start_targets=start_targets, terminal=terminal, predecessors=predecessors)


def _check_unconditional_cycles(edges: dict[str, list[tuple[str, Any]]]) -> None:
    plain = {s: [t for t, r in out if r is None] for s, out in edges.items()}
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in plain.get(name, []):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [name, nxt]
                raise GraphError(
                    "Unconditional cycle " + " → ".join(cycle) + ": a loop needs at least one routed edge."
                )
            if state.get(nxt) is None:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in plain:
        if state.get(name) is None:
            visit(name, [name])


def _check_edge_schemas(named: dict[str, BaseNode], edges: dict[str, list[tuple[str, Any]]]) -> None:
    """An edge whose source declares an ``output_schema`` and target an ``input_schema`` needs them equal."""
    for source, out in edges.items():
        produced = named[source].output_schema
        if produced is None:
            continue
        for target, _ in out:
            expected = named[target].input_schema
            if expected is not None and expected != produced:
                raise GraphError(
                    f"Schema mismatch on edge {source!r} → {target!r}: output_schema {produced!r} "
                    f"is not the input_schema {expected!r}."
                )
