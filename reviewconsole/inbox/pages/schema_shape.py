"""What a ``response_schema`` is as a generated form (``schema_form``), before one is drawn.

:func:`resolve` follows a schema's local ``$ref`` and pydantic's wrappers and :func:`kind_of`
says which kind of field it draws. :func:`check_drawable` refuses a schema no form can be drawn
from: a ``$ref`` that refers to itself (the form would nest without end), or, given a limit, one
whose form needs more fields than a post may carry (:func:`field_limit`, tied to Django's
``DATA_UPLOAD_MAX_NUMBER_FIELDS``). The API refuses such a schema (``review_checks``); an item
stored before is shown without its form.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

__all__ = ["FormSchemaError", "check_drawable", "field_limit", "kind_of", "resolve"]

# Fields the decision form posts besides the generated ones (token, request id, action, reason,
# feedback, draft, arguments, standing approval…), with room to spare.
OTHER_FIELDS = 30
SELF_REFERENCE = "a $ref that refers to itself cannot be drawn as a form"


class FormSchemaError(ValueError):
    """A schema no form can be drawn from: ``path`` (list of str) is where in the schema, ``message`` why."""

    def __init__(self, path: list[str], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message

    @property
    def where(self) -> str:
        return "/".join(self.path) or "(root)"


def resolve(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Follow local ``$ref`` and unwrap ``anyOf [X, {"type": "null"}]`` / one-item ``allOf``."""
    if depth > 20 or not isinstance(schema, dict):
        return schema if isinstance(schema, dict) else {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        merged = {**_target(root, ref), **{k: v for k, v in schema.items() if k != "$ref"}}
        return resolve(merged, root, depth + 1)
    unwrapped = _unwrapped(schema)
    if unwrapped is None:
        return schema
    key, index, rest = unwrapped
    if key == "allOf":
        return resolve({**schema[key][0], **rest}, root, depth + 1)
    return {**resolve(schema[key][index], root, depth + 1), **rest, "nullable": True}


def _target(root: dict[str, Any], ref: str) -> dict[str, Any]:
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target if isinstance(target, dict) else {}


def _unwrapped(schema: dict[str, Any]) -> tuple[str, int, dict[str, Any]] | None:
    """``(key, index, the other keys)`` of the one real option of ``anyOf``/``oneOf`` (the other
    being null) or of a one-item ``allOf``; None when the schema is no such wrapper."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = [n for n, o in enumerate(options) if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(real) == 1:
                return key, real[0], {k: v for k, v in schema.items() if k != key}
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        return "allOf", 0, {k: v for k, v in schema.items() if k != "allOf"}
    return None


def kind_of(schema: dict[str, Any]) -> str:
    """The field a resolved schema draws: enum, text, textarea, number, integer, boolean,
    object, list, or json (edited as JSON text)."""
    if "enum" in schema or "const" in schema:
        return "enum"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        if schema.get("format") in ("textarea", "multiline") or int(schema.get("maxLength") or 0) > 200:
            return "textarea"
        return "text"
    if kind in ("number", "integer", "boolean", "object"):
        return str(kind)
    if kind == "array":
        return "list"
    return "json"


def field_limit() -> int | None:
    """How many generated fields a decision may post (None: no limit)."""
    most = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    return None if most is None else max(0, int(most) - OTHER_FIELDS)


def check_drawable(schema: Any, max_fields: int | None = None) -> None:
    """Raise :class:`FormSchemaError` unless a form can be drawn from ``schema``: none of its
    ``$ref`` refers to itself and, given ``max_fields``, the form needs at most that many fields
    (each list at its ``minItems`` rows, at least one; an object with no fields counts one).
    """
    if not isinstance(schema, dict):
        return
    cap = max_fields if max_fields is not None else 1_000_000  # bounds the walk itself
    needed = _count(schema, schema, [], frozenset(), cap)
    if max_fields is not None and needed > max_fields:
        raise FormSchemaError(
            [],
            f"its form would need more than {max_fields} fields (lists count at their minItems rows), "
            f"more than the console can take; ask for fewer",
        )


def _count(schema: Any, root: dict[str, Any], where: list[str], refs: frozenset[str], cap: int) -> int:
    """The fields ``schema`` draws (a number over ``cap`` once it is over: the walk stops there)."""
    if not isinstance(schema, dict):
        return 1
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in refs:
            raise FormSchemaError([*where, "$ref"], SELF_REFERENCE)
        merged = {**_target(root, ref), **{k: v for k, v in schema.items() if k != "$ref"}}
        return _count(merged, root, ref[2:].split("/"), refs | {ref}, cap)
    unwrapped = _unwrapped(schema)
    if unwrapped is not None:
        key, index, rest = unwrapped
        return _count({**schema[key][index], **rest}, root, [*where, key, str(index)], refs, cap)
    kind = kind_of(schema)
    if kind == "object":
        total = 0
        for key, sub in (schema.get("properties") or {}).items():
            total += _count(sub, root, [*where, "properties", str(key)], refs, cap - total)
            if total > cap:
                return total
        return max(total, 1)
    if kind == "list":
        rows = max(int(schema.get("minItems") or 0), 1)
        if rows > cap:
            return rows
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return rows * _count(items, root, [*where, "items"], refs, cap // rows)
    return 1
