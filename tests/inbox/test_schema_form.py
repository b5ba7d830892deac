"""Forms generated from JSON Schema: fields for every supported type, posts back to JSON values."""

from __future__ import annotations

import pytest

from reviewconsole.demo.incident_triage import Triage
from reviewconsole.inbox.errors import DecisionError
from reviewconsole.inbox.pages.schema_form import form_fields, parse_form, validate_value

SCHEMA = Triage.model_json_schema()


def _flat(field):
    yield field
    for child in field.children:
        yield from _flat(child)


def test_every_kind_of_field_from_a_pydantic_model():
    root = form_fields(SCHEMA)
    kinds = {f.name: f.kind for f in _flat(root)}
    assert kinds == {
        "f": "object",
        "f.severity": "enum",
        "f.summary": "textarea",
        "f.affected_customers": "integer",
        "f.page_on_call": "boolean",
        "f.components": "list",
        "f.components.0": "text",
        "f.components.1": "text",  # two spare rows, for a page without JavaScript
        "f.components.2": "text",
        "f.contact": "object",
        "f.contact.name": "text",
        "f.contact.email": "text",
    }
    required = {f.name for f in _flat(root) if f.required}
    assert {"f.severity", "f.summary", "f.affected_customers", "f.contact", "f.contact.name"} <= required
    assert "f.contact.email" not in required and "f.page_on_call" not in required
    severity = next(f for f in _flat(root) if f.name == "f.severity")
    assert [c[1] for c in severity.choices] == ["low", "medium", "high", "critical"]
    components = next(f for f in _flat(root) if f.name == "f.components")
    assert components.template.name == "f.components.__index__"


def test_a_post_becomes_the_value_and_empty_optionals_are_left_out():
    data = {
        "f.severity": '"low"',
        "f.summary": "Typo on the help page",
        "f.affected_customers": "0",
        "f.components.0": "docs",
        "f.components.3": "",
        "f.contact.name": "Ann",
        "f.contact.email": "",
    }
    value = validate_value(SCHEMA, data)
    assert value == {
        "severity": "low",
        "summary": "Typo on the help page",
        "affected_customers": 0,
        "page_on_call": False,
        "components": ["docs"],
        "contact": {"name": "Ann"},
    }


def test_a_list_row_numbered_with_other_digits_is_not_a_row():
    """`str.isdigit` takes "²", which `int` refuses: like any name the form does not have, ignored."""
    data = {
        "f.severity": '"low"',
        "f.summary": "Typo on the help page",
        "f.affected_customers": "0",
        "f.components.\u00b2": "x",
        "f.components.1\u0663": "y",
        "f.components.0": "docs",
        "f.contact.name": "Ann",
    }
    assert validate_value(SCHEMA, data)["components"] == ["docs"]
    components = next(f for f in _flat(form_fields(SCHEMA, data)) if f.name == "f.components")
    assert [row.name for row in components.children] == ["f.components.0"]


def test_a_whole_number_field_refuses_a_fraction():
    value, errors = parse_form({"type": "integer"}, {"f": "2.5"})
    assert (value, errors) == (None, [{"path": [], "message": "Enter a whole number."}])


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        ({"type": "string"}, "hello", "hello"),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "integer"}, "7", 7),
        ({"type": "boolean"}, "1", True),
        ({"enum": [1, 2, 3]}, "2", 2),
        ({"type": "array", "items": {"type": "integer"}}, None, [4, 5]),
    ],
)
def test_top_level_values_of_each_type(schema, raw, value):
    data = {"f": raw} if raw is not None else {"f.0": "4", "f.1": "5"}
    assert validate_value(schema, data) == value


def test_errors_land_on_their_fields_and_nothing_else_is_returned():
    with pytest.raises(DecisionError) as caught:
        validate_value(SCHEMA, {"f.severity": '"nope"', "f.affected_customers": "x"})
    paths = sorted(tuple(e["path"]) for e in caught.value.errors)
    assert paths == [("affected_customers",), ("contact", "name"), ("severity",), ("summary",)]
    root = form_fields(SCHEMA, {"f.severity": '"nope"'}, caught.value.errors)
    by_name = {f.name: f for f in _flat(root)}
    assert by_name["f.affected_customers"].errors == ["Enter a whole number."]
    assert by_name["f.summary"].errors == ["This field is required."]


def test_unknown_constructs_are_edited_as_json():
    schema = {"type": "object", "properties": {"extra": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}
    root = form_fields(schema)
    assert root.children[0].kind == "json"
    assert validate_value(schema, {"f.extra": "12"}) == {"extra": 12}


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            {
                "type": "string",
                "title": "Cost Center",
                "description": "The cost center to charge, e.g. OP-1234.",
                "pattern": "^[A-Z]{2}-[0-9]{3,6}$",
            },
            "Cost Center: not in the expected form (The cost center to charge, e.g. OP-1234.)",
        ),
        ({"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,6}$"}, "cost_center: not in the expected form."),
    ],
)
def test_a_value_failing_its_pattern_gets_a_human_message_not_the_regex(field, message):
    schema = {"type": "object", "properties": {"cost_center": field}, "required": ["cost_center"]}
    with pytest.raises(DecisionError) as caught:
        validate_value(schema, {"f.cost_center": "nope"})
    assert caught.value.errors == [{"path": ["cost_center"], "message": message}]
    assert "[A-Z]" not in str(caught.value.errors)
