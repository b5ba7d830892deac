"""Which schemas a form can be drawn from: no ``$ref`` that refers to itself, no more fields than
a post may carry (``schema_shape.check_drawable``)."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.pages.schema_form import form_fields
from reviewconsole.inbox.pages.schema_shape import SELF_REFERENCE, FormSchemaError, check_drawable, field_limit

NODE = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}}
RECURSIVE = {"$defs": {"node": NODE}, "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}}
RECURSIVE_LIST = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
    "$ref": "#/$defs/node",
}
OPTIONAL_CHILD = {  # pydantic's ``child: Node | None = None``
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": None}},
        }
    },
    "$ref": "#/$defs/Node",
}
INTO_A_PROPERTY = {
    "type": "object",
    "properties": {"root": {"type": "object", "properties": {"again": {"$ref": "#/properties/root"}}}},
}


def grid(rows, columns):
    row = {"type": "array", "minItems": columns, "items": {"type": "string"}}
    return {"type": "object", "properties": {"rows": {"type": "array", "minItems": rows, "items": row}}}


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (RECURSIVE, ["$defs", "node", "properties", "child", "$ref"]),
        (RECURSIVE_LIST, ["$defs", "node", "properties", "kids", "items", "$ref"]),
        (OPTIONAL_CHILD, ["$defs", "Node", "properties", "child", "anyOf", "0", "$ref"]),
        (INTO_A_PROPERTY, ["properties", "root", "properties", "again", "$ref"]),
    ],
)
def test_a_ref_that_refers_to_itself_is_named_and_no_form_is_drawn(schema, where):
    with pytest.raises(FormSchemaError) as caught:
        check_drawable(schema)
    assert (caught.value.path, caught.value.message) == (where, SELF_REFERENCE)
    with pytest.raises(FormSchemaError):
        form_fields(schema)


def test_a_part_used_twice_is_no_recursion():
    level = {"type": "string", "enum": ["low", "high"]}
    schema = {"$defs": {"level": level}, "properties": {"a": {"$ref": "#/$defs/level"}, "b": {"$ref": "#/$defs/level"}}}
    check_drawable({**schema, "type": "object"}, field_limit())
    assert [f.name for f in form_fields({**schema, "type": "object"}).children] == ["f.a", "f.b"]


def test_a_form_needing_more_fields_than_a_post_carries_is_refused(settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
    check_drawable(grid(20, 40), field_limit())  # 800 fields
    with pytest.raises(FormSchemaError) as caught:
        check_drawable(grid(40, 40), field_limit())  # 1,600
    assert caught.value.path == []
    assert f"more than {field_limit()} fields" in caught.value.message
    with pytest.raises(FormSchemaError):
        check_drawable(grid(10**12, 10**12), field_limit())  # counted, never walked row by row


def test_without_a_limit_on_posted_fields_only_recursion_is_refused(settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = None
    assert field_limit() is None
    check_drawable(grid(40, 40), field_limit())
