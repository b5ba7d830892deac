"""What a CEL condition refers to, read from its syntax tree, and checked against what is declared.

The evaluating library (``cel``, Rust) gives a condition's names only, the variables of list
macros among them; so the names are read from the syntax tree of ``cel-python``'s parser
(``celpy.celparser``, the CEL spec's grammar in Lark) instead. :func:`read` walks it:

- **free names**: identifiers that are neither a root (``args``, ``state``) nor bound by a list
  macro around them (``x`` in ``args.items.exists(x, x.price > 100)`` is bound; a second ``x``
  outside the macro's parentheses is free). A condition may name nothing else.
- **list macros**: ``all``, ``exists``, ``exists_one``, ``map``, ``filter`` called on a value
  (counted: ``conditions.MAX_MACROS`` limits them).
- **undeclared references**: a field (``args.amont``, ``args["amont"]``, ``x.prce`` for an
  element of ``args.items``, ``state.tierr``) that the schema of what it is read from does not
  declare. Schemas are JSON Schema as pydantic writes them (``properties``, ``$ref`` into
  ``$defs``, ``anyOf`` for optional or union types, ``items`` for lists): a field is checked
  while the schema says which fields exist (an object with ``properties`` and no
  ``additionalProperties``); below an open part (``dict[str, Any]``, ``Any``, a computed value
  such as ``map``'s result) nothing is checked.

Roots are :class:`Root`: its schema (None: not declared, nothing checked) and how messages name
the fields it declares (e.g. "the parameters of ask_for_approval").

Raises nothing: a text this parser cannot read is :attr:`Reading.unreadable` (the caller refuses it).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MACROS", "Reading", "Root", "Schema", "read"]

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
"""CEL's list macros (``has`` is a macro too, but takes no variable and does not loop)."""


@dataclass(frozen=True, slots=True)
class Schema:
    """A JSON Schema fragment (``node``) and the document its ``$ref`` resolve in (``document``)."""

    node: Mapping[str, Any]
    document: Mapping[str, Any]

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> Schema:
        return cls(document, document)


@dataclass(frozen=True, slots=True)
class Root:
    """What a root name reads: one of ``schemas`` (a union: a rule for every tool reads the
    arguments of any of them; empty: not declared, nothing checked), and how a message names the
    fields they declare (``declares``, e.g. "the parameters of ask_for_approval")."""

    schemas: tuple[Schema, ...] = ()
    declares: str = ""


@dataclass
class Reading:
    """What :func:`read` found: ``free`` names, ``macros`` (list macros called), ``roots`` (root
    names used), ``unknown`` (one phrase per undeclared reference, e.g. ``args.amont (the
    parameters of ask_for_approval: amount, order_id, reason)``), and ``unreadable`` (the parser's
    first line when it could not read the text; then nothing else is filled)."""

    free: set[str] = field(default_factory=set)
    macros: int = 0
    roots: set[str] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)
    unreadable: str = ""


@dataclass(frozen=True, slots=True)
class _Ref:
    """A value the walk follows: a path people read (``args.items[]``; "" for a computed value),
    the schemas it may have (None: open, nothing checked below it) and how a message names the
    fields it declares."""

    path: str = ""
    schemas: tuple[Schema, ...] | None = None
    declares: str = ""


_NOTHING = _Ref()


@functools.cache
def _parser() -> tuple[Any, tuple[type[Exception], ...]]:
    """cel-python's parser class and the errors it raises, imported when first needed (its grammar
    is built then, once per process: about half a second)."""
    # Heavy (the grammar is built on import): only processes that read a condition pay for it.
    from celpy.celparser import CELParseError, CELParser
    from lark.exceptions import LarkError

    return CELParser, (CELParseError, LarkError, RecursionError)


def read(text: str, roots: Mapping[str, Root]) -> Reading:
    """Read ``text`` (a CEL expression that already compiles) with ``roots`` as the names it may
    use; see the module docstring."""
    parser, errors = _parser()
    reading = Reading()
    try:
        tree = parser().parse(text)  # a parser per call: it keeps the text it parses
    except errors as exc:
        reading.unreadable = (str(exc).strip().splitlines() or ["it does not parse"])[0]
        return reading
    scope = {name: _Ref(name, root.schemas or None, root.declares) for name, root in roots.items()}
    _Walk(reading, set(roots)).value(tree, scope)
    return reading


class _Walk:
    def __init__(self, reading: Reading, roots: set[str]) -> None:
        self.reading = reading
        self.root_names = roots

    def value(self, node: Any, scope: Mapping[str, _Ref]) -> _Ref:
        """The value ``node`` stands for, recording what it names on the way."""
        from lark import Tree  # cel-python's parser brings lark: loaded with it, when first needed (_parser)

        if not isinstance(node, Tree):
            return _NOTHING
        kind, children = node.data, node.children
        if kind in ("ident", "dot_ident"):
            return self.name(str(children[0]), scope)
        if kind == "member_dot":
            return self.select(self.value(children[0], scope), str(children[1]))
        if kind == "member_index":
            base, key = self.value(children[0], scope), _string_literal(children[1])
            self.value(children[1], scope)
            return self.select(base, key) if key is not None else _element(base)
        if kind == "member_dot_arg":
            return self.method(children, scope)
        if kind in ("ident_arg", "dot_ident_arg"):  # a function (or has()): its arguments are read
            for expr in _exprs(children[1:]):
                self.value(expr, scope)
            return _NOTHING
        if kind == "member_object":  # Type{field: value}: the values are read
            for child in children[1:]:
                self.value(child, scope)
            return _NOTHING
        found = [self.value(child, scope) for child in children if isinstance(child, Tree)]
        return found[0] if len(children) == 1 and found else _NOTHING  # wrappers and parentheses pass through

    def name(self, name: str, scope: Mapping[str, _Ref]) -> _Ref:
        if name not in scope:
            self.reading.free.add(name)
            return _NOTHING
        if name in self.root_names and scope[name].path == name:
            self.reading.roots.add(name)
        return scope[name]

    def method(self, children: list[Any], scope: Mapping[str, _Ref]) -> _Ref:
        """``value.name(args)``: a list macro binds its variable to the list's elements in its
        other arguments; any other method reads its arguments."""
        base, name = self.value(children[0], scope), str(children[1])
        exprs = list(_exprs(children[2:]))
        variable = _bare_name(exprs[0]) if name in MACROS and len(exprs) in (2, 3) else None
        if variable is None:
            for expr in exprs:
                self.value(expr, scope)
            return _NOTHING
        self.reading.macros += 1
        element = _element(base)
        inner = {**scope, variable: _Ref(variable, element.schemas, element.declares)}
        for expr in exprs[1:]:
            self.value(expr, inner)
        return base if name == "filter" else _NOTHING  # filter keeps the elements; map computes new ones

    def select(self, base: _Ref, name: str) -> _Ref:
        """Field ``name`` of ``base``, recorded as unknown when ``base``'s schemas declare it nowhere."""
        path = f"{base.path}.{name}" if base.path else ""
        if base.schemas is None:
            return _Ref(path)
        closed = [_closed_fields(s) for s in _alternatives(base.schemas)]
        if not closed or any(fields is None for fields in closed):
            return _Ref(path)  # an open alternative: any field may be there
        found = tuple(fields[name] for fields in closed if fields is not None and name in fields)
        if not found:
            declared = sorted({n for fields in closed if fields is not None for n in fields})
            listed = ", ".join(declared) if declared else "none"
            self.reading.unknown.append(f"{path or name} ({base.declares}: {listed})")
            return _Ref(path)
        return _Ref(path, found, f"the fields of {path}")


def _exprs(children: list[Any]) -> Iterator[Any]:
    """The expressions of an optional ``exprlist`` child."""
    for child in children:
        if getattr(child, "data", None) == "exprlist":
            yield from child.children


def _bare_name(node: Any) -> str | None:
    """The identifier ``node`` is, through its one-child wrappers, or None."""
    while getattr(node, "data", None) not in (None, "ident"):
        if len(node.children) != 1:
            return None
        node = node.children[0]
    return str(node.children[0]) if getattr(node, "data", None) == "ident" else None


def _string_literal(node: Any) -> str | None:
    """The text of a plain string literal ``node`` (through its wrappers), or None."""
    while getattr(node, "data", None) not in (None, "literal"):
        if len(node.children) != 1:
            return None
        node = node.children[0]
    if getattr(node, "data", None) != "literal":
        return None
    token = str(node.children[0])
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'" and "\\" not in token:
        return token[1:-1]
    return None


def _resolved(schema: Schema) -> Schema:
    node, seen = schema.node, 0
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/") and seen < 20:
        target: Any = schema.document
        for part in node["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        node, seen = target if isinstance(target, Mapping) else {}, seen + 1
    return Schema(node, schema.document)


def _alternatives(schemas: tuple[Schema, ...]) -> list[Schema]:
    """The schemas a value may have, unions (``anyOf``, ``oneOf``) spread and ``null`` left out."""
    found: list[Schema] = []
    for schema in schemas:
        node = _resolved(schema)
        branches = node.node.get("anyOf") or node.node.get("oneOf")
        if isinstance(branches, list):
            found += _alternatives(tuple(Schema(b, node.document) for b in branches if isinstance(b, Mapping)))
        elif node.node.get("type") != "null":
            found.append(node)
    return found


def _closed_fields(schema: Schema) -> dict[str, Schema] | None:
    """The fields an object schema declares when it allows no others, else None (open)."""
    properties = schema.node.get("properties")
    if not isinstance(properties, Mapping) or schema.node.get("additionalProperties"):
        return None
    return {name: Schema(value, schema.document) for name, value in properties.items() if isinstance(value, Mapping)}


def _element(base: _Ref) -> _Ref:
    """An element of the list ``base`` (its ``items``), open when that is not known."""
    path = f"{base.path}[]" if base.path else ""
    if base.schemas is None:
        return _Ref(path)
    items = [s.node.get("items") for s in _alternatives(base.schemas)]
    if not items or not all(isinstance(i, Mapping) for i in items):
        return _Ref(path)
    schemas = tuple(Schema(i, s.document) for i, s in zip(items, _alternatives(base.schemas), strict=True))
    return _Ref(path, schemas, f"the fields of {path}")
