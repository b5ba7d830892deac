"""A form generated from an interrupt's ``response_schema`` (JSON Schema, as the engine stores it).

Supported: strings (text; ``format`` email, uri, date, date-time and time as the matching HTML
input, checked on the server by ``schema_formats``; long text as a text area), numbers, integers,
booleans, enums, lists (of any of these, or of objects) and nested objects (fieldsets); ``$ref``
to ``$defs``/``definitions`` and pydantic's ``anyOf [X, null]`` for optional fields. Anything
else is edited as JSON text. Labels are the schema's ``title`` (else the property's name), help
is its ``description``; a list's rows are named from the items' ``title``, else the singular of
the list's label ("Component 1"). A new form shows a list's rows plus :data:`SPARE_ROWS` empty
ones (marked ``spare``: without JavaScript they are the rows one may fill; with it,
``schema_form.js`` drops them and adds and removes rows instead).

Field names are the JSON path under ``f``: ``f.address.city``, ``f.tags.0``,
``f.people.1.name``, a property's ``~`` and ``.`` escaped as ``~0`` and ``~1`` (``{"a.b": …}``
is ``f.a~1b``); ids are unique likewise (:attr:`FormField.id`). :func:`validate_value` turns
posted fields back into a JSON value and validates it with ``jsonschema``: a list row whose
inputs are all empty (a spare, or the one row an empty list shows) is no row of the answer, so a
list may be answered empty (``minItems`` says how many rows it needs). On failure it raises
:class:`DecisionError` whose ``errors`` point at fields (``[{"path": [...], "message": str}]``)
and nothing is stored. A schema no form can be drawn from (``schema_shape.check_drawable``) is
refused by :func:`form_fields` (``FormSchemaError``) and by :func:`validate_value`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jsonschema

from engine import FORMAT_CHECKER

from ... import json_input
from ..errors import DecisionError
from .schema_formats import format_message, input_type, posted_value, shown_value
from .schema_shape import FormSchemaError, check_drawable, kind_of, resolve

__all__ = ["FormField", "form_fields", "parse_form", "validate_value"]

ROOT = "f"
_MAX_ITEMS = 200  # list rows read from a post (the schema's maxItems still applies)
UNDRAWABLE = "This request's form cannot be drawn: answer it another way or reject it"
SPARE_ROWS = 2  # empty rows a new form adds to each list, up to its maxItems
NUMBER = "__number__"  # in a new row's label: its number, set by schema_form.js
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def _part(key: Any) -> str:
    """A property's name as a part of a field's name: ``~`` as ``~0`` and ``.`` as ``~1`` (as a
    JSON Pointer escapes ``/``), so that ``{"a.b": …}`` and ``{"a": {"b": …}}`` post apart."""
    return str(key).replace("~", "~0").replace(".", "~1")


@dataclass
class FormField:
    """One field (or group of fields) of a generated form, ready for a template."""

    name: str
    path: list[Any]
    label: str
    kind: str
    required: bool = False
    description: str = ""
    input_type: str = "text"
    value: str = ""
    checked: bool = False
    choices: list[tuple[str, str]] = field(default_factory=list)
    children: list[FormField] = field(default_factory=list)
    template: FormField | None = None  # a list's empty row, for "Add"
    errors: list[str] = field(default_factory=list)
    step: str = "any"
    nullable: bool = False  # the schema also takes null (pydantic's ``X | None``)
    format: str = ""  # a string's ``format`` (schema_formats)
    spare: bool = False  # an empty list row added for a form without JavaScript

    @property
    def id(self) -> str:
        """``id-f-`` and the path's parts joined by ``-``: letters, digits and ``_`` as they are,
        any other character as ``~<hex>~``, so that two fields never share an id."""
        return "-".join(["id", ROOT, *(_ID_UNSAFE.sub(lambda m: f"~{ord(m[0]):x}~", str(p)) for p in self.path)])

    @property
    def is_group(self) -> bool:
        return self.kind in ("object", "list")


def _label(name: Any, schema: dict[str, Any]) -> str:
    title = schema.get("title")
    if isinstance(title, str) and title:
        return title
    return str(name).replace("_", " ").capitalize() if name != ROOT else "Answer"


def _singular(label: str) -> str:
    """The singular of an English plural label, for a list's rows ("Components" → "Component")."""
    for plural, single in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if label.endswith(plural):
            return label[: -len(plural)] + single
    if label.endswith("s") and not label.endswith("ss") and len(label) > 3:
        return label[:-1]
    return label


def _row_label(items: dict[str, Any], root: dict[str, Any], list_label: str) -> str:
    title = resolve(items, root).get("title") if isinstance(items, dict) else None
    return title if isinstance(title, str) and title else _singular(list_label)


def _shown(value: Any) -> str:
    """A value as a field shows it: text as it is, other JSON values as JSON, null as nothing."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return bool(schema.get("nullable")) or (isinstance(kind, list) and "null" in kind)


def _enum_choices(schema: dict[str, Any]) -> list[tuple[str, str]]:
    values = schema["enum"] if "enum" in schema else [schema["const"]]
    return [(json.dumps(v), v if isinstance(v, str) else json.dumps(v)) for v in values]


def _list_rows(data: dict[str, Any], name: str) -> list[int]:
    prefix = name + "."
    found = set()
    for key in data:
        if key.startswith(prefix):
            head = key[len(prefix) :].split(".", 1)[0]
            # Row numbers in ASCII digits only ("²".isdigit() is true, int() refuses it): any
            # other key is not a field of this form and is ignored, like every unknown name.
            if head.isascii() and head.isdigit() and int(head) < _MAX_ITEMS:
                found.add(int(head))
    return sorted(found)


def _build(
    schema: dict[str, Any],
    root: dict[str, Any],
    name: str,
    path: list[Any],
    label_key: Any,
    required: bool,
    data: dict[str, Any],
    initial: Any,
) -> FormField:
    schema = resolve(schema, root)
    kind = kind_of(schema)
    node = FormField(
        name=name,
        path=path,
        label=_label(label_key, schema),
        kind=kind,
        required=required,
        description=str(schema.get("description") or ""),
        nullable=_nullable(schema),
    )
    if initial is None:  # the schema's default starts the field (a null default: an empty one)
        initial = schema.get("default")
    if kind == "object":
        props = schema.get("properties") or {}
        needed = set(schema.get("required") or [])
        start = initial if isinstance(initial, dict) else {}
        node.children = [
            _build(sub, root, f"{name}.{_part(key)}", [*path, key], key, key in needed, data, start.get(key))
            for key, sub in props.items()
        ]
        return node
    if kind == "list":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        rows = _list_rows(data, name)
        start = initial if isinstance(initial, list) else []
        count = max(len(rows), len(start), int(schema.get("minItems") or 0), 1)
        indices = rows or list(range(count))
        spares = 0 if rows else max(0, min(SPARE_ROWS, int(schema.get("maxItems") or _MAX_ITEMS) - count))
        if kind_of(resolve(items, root)) == "boolean":
            spares = 0  # an unticked box is an answer (false), not an empty row
        row_label = _row_label(items, root, node.label)
        for n, i in enumerate([*indices, *range(count, count + spares)]):
            child = _build(items, root, f"{name}.{i}", [*path, i], i, False, data, start[i] if i < len(start) else None)
            child.label, child.spare = f"{row_label} {n + 1}", n >= len(indices)
            node.children.append(child)
        node.template = _build(items, root, f"{name}.__index__", [*path, "__index__"], "", False, {}, None)
        node.template.label = f"{row_label} {NUMBER}"
        return node
    raw = data.get(name)
    if kind == "enum":
        node.choices = _enum_choices(schema)
        node.value = raw if raw is not None else (json.dumps(initial) if initial is not None else "")
    elif kind == "boolean":
        node.checked = (raw is not None and raw != "") if data else initial is True
    else:
        node.format = str(schema.get("format") or "") if kind == "text" else ""
        node.value = str(raw) if raw is not None else shown_value(node.format, _shown(initial))
        node.input_type = input_type(node.format)
        if kind in ("number", "integer"):
            node.input_type = "number"
            node.step = "1" if kind == "integer" else "any"
    return node


def form_fields(
    schema: dict[str, Any], data: dict[str, Any] | None = None, errors: list[dict[str, Any]] | None = None
) -> FormField:
    """The form for ``schema``: its root field (an object's fields are its children).

    ``data`` re-fills the fields from a post; ``errors`` (``validate_value``'s) are attached to
    the field at their path, or to the root when no field matches.

    Raises:
        FormSchemaError: no form can be drawn from ``schema`` (a ``$ref`` refers to itself).
    """
    check_drawable(schema)
    root = _build(schema, schema, ROOT, [], ROOT, True, data or {}, None)
    for error in errors or []:
        target = _find(root, list(error.get("path") or [])) or root
        target.errors.append(str(error.get("message", "")))
    return root


def _find(node: FormField, path: list[Any]) -> FormField | None:
    if node.path == path:
        return node
    for child in node.children:
        if path[: len(child.path)] == child.path:
            return _find(child, path)
    return None


def _number(raw: str, kind: str) -> Any:
    value = float(raw)
    if not math.isfinite(value):  # "nan", "inf", "1e400": no JSON number, nothing a database stores
        raise ValueError("not a finite number")
    if kind == "integer":
        if not value.is_integer():
            raise ValueError("not an integer")
        return int(value)
    return int(value) if value.is_integer() and "." not in raw and "e" not in raw.lower() else value


@dataclass
class _Reading:
    """One post being read: its fields, the fields that cannot be read, and the field path each
    kept list row came from (by the row's path in the answer: rows left empty are dropped)."""

    data: dict[str, Any]
    errors: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[tuple[Any, ...], list[Any]] = field(default_factory=dict)

    def field_path(self, path: list[Any]) -> list[Any]:
        """The path of the field that shows the answer's part at ``path``."""
        answer: list[Any] = []
        found: list[Any] = []
        for part in path:
            answer.append(part)
            found = list(self.rows.get(tuple(answer), [*found, part]))
        return found


def _blank(node: FormField, data: dict[str, Any]) -> bool:
    """Whether every input of ``node`` was posted empty (or not at all; an unticked box posts nothing)."""
    if node.is_group:
        return all(_blank(child, data) for child in node.children)
    raw = data.get(node.name)
    return raw is None or str(raw).strip() == ""


def _parse(node: FormField, reading: _Reading, at: list[Any]) -> Any:
    """The JSON value of ``node`` (at ``at`` in the answer) from the post (None: left empty)."""
    data, errors = reading.data, reading.errors
    if node.kind == "object":
        found = {}
        for child in node.children:
            key = child.path[-1]
            value = _parse(child, reading, [*at, key])
            if value is not None:
                found[key] = value
            elif child.required and child.nullable and not child.is_group:
                found[key] = None  # left empty where the schema wants the key: null
        return found if (found or node.required) else None
    if node.kind == "list":
        values: list[Any] = []
        for child in node.children:
            if child.kind != "boolean" and _blank(child, data):
                continue  # a row left empty (a spare, or one never filled in) is no row of the answer
            value = _parse(child, reading, [*at, len(values)])
            if value is not None:
                reading.rows[(*at, len(values))] = child.path
                values.append(value)
        return values
    raw = data.get(node.name)
    if node.kind == "boolean":
        return raw is not None and raw != ""
    if raw is None or str(raw).strip() == "":
        return None
    raw = str(raw)
    try:
        if node.kind in ("number", "integer"):
            return _number(raw.strip(), node.kind)
        if node.kind in ("enum", "json"):
            return json_input.loads(raw)
        if node.format:
            return posted_value(node.format, raw)
    except json_input.UnstorableValueError:
        message = "Enter JSON without NUL characters, unpaired surrogates or numbers out of range."
        errors.append({"path": node.path, "message": message})
        return None
    except ValueError:
        message = {"integer": "Enter a whole number.", "number": "Enter a number."}.get(node.kind, "Enter valid JSON.")
        errors.append({"path": node.path, "message": message})
        return None
    return raw


def parse_form(schema: dict[str, Any], data: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """Posted fields → ``(value, conversion errors)``; the value is not validated yet."""
    value, reading = _read(schema, data)
    return value, reading.errors


def _read(schema: dict[str, Any], data: dict[str, Any]) -> tuple[Any, _Reading]:
    reading = _Reading(data)
    return _parse(form_fields(schema, data), reading, []), reading


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=FORMAT_CHECKER)


def _errors(value: Any, schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for error in _validator(json.dumps(schema, sort_keys=True)).iter_errors(value):
        path = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [k for k in error.validator_value if k not in error.instance]
            for key in missing:
                found.append({"path": [*path, key], "message": "This field is required."})
            continue
        message = error.message
        if error.validator == "pattern":
            message = _pattern_message(error.schema, path)
        elif error.validator == "format":
            message = format_message(error.validator_value) or message
        elif error.validator in _LIMITS:  # in words, not the validator's Python repr ("'x' is too short")
            limit = error.validator_value
            message = _LIMITS[error.validator].format(n=limit, s="" if limit == 1 else "s")
        found.append({"path": path, "message": message})
    unique = {(tuple(map(str, e["path"])), e["message"]): e for e in found}  # one per field and reason
    return sorted(unique.values(), key=lambda e: [str(p) for p in e["path"]])


_LIMITS = {
    "minItems": "Fill in at least {n} row{s}.",
    "maxItems": "Fill in at most {n} row{s}.",
    "minLength": "Write at least {n} character{s}.",
    "maxLength": "Write at most {n} character{s}.",
}


def _pattern_message(field_schema: Any, path: list[Any]) -> str:
    """A reviewer's message for a value that fails its ``pattern``: the field's ``title`` (else
    its name) and ``description``, never the regular expression
    (``"Cost Center: not in the expected form (The cost center to charge, e.g. OP-1234.)"``)."""
    field_schema = field_schema if isinstance(field_schema, dict) else {}
    label = str(field_schema.get("title") or (path[-1] if path else "This field"))
    hint = str(field_schema.get("description") or "").strip()
    return f"{label}: not in the expected form" + (f" ({hint})" if hint else ".")


def validate_value(schema: dict[str, Any], data: dict[str, Any]) -> Any:
    """The answer the form ``data`` gives, valid against ``schema``.

    Raises:
        DecisionError: a field cannot be read or the value fails the schema (``errors`` says
            where and why), or no form can be drawn from ``schema`` (no ``errors``).
    """
    try:
        value, reading = _read(schema, data)
    except FormSchemaError as exc:
        raise DecisionError(f"{UNDRAWABLE} ({exc.message}, at {exc.where}); nothing was recorded.") from None
    errors = reading.errors
    unreadable = [e["path"] for e in errors]
    found = [{**e, "path": reading.field_path(e["path"])} for e in _errors(value, schema)]
    errors += [e for e in found if e["path"] not in unreadable]  # one message per field
    if errors:
        raise DecisionError("Correct the highlighted fields; nothing was recorded.", errors=errors)
    return value
