"""Generated forms: every property posts under its own name, and list rows left empty are no rows
of the answer (so a list can be answered empty; ``minItems`` says how many rows it needs)."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.errors import DecisionError
from reviewconsole.inbox.pages.schema_form import form_fields, validate_value

COLLIDING = {
    "type": "object",
    "properties": {
        "a.b": {"type": "string"},
        "a": {"type": "object", "properties": {"b": {"type": "string"}}},
        "a-b": {"type": "string"},
        "a~1b": {"type": "string"},
    },
}
PEOPLE = {
    "type": "object",
    "properties": {
        "note": {"type": "string"},
        "people": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["name"],
            },
        },
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    },
}


def _leaves(field):
    if not field.children:
        yield field
    for child in field.children:
        yield from _leaves(child)


def _everything(field):
    yield field
    for child in field.children:
        yield from _everything(child)


def test_each_property_posts_under_its_own_name_and_id():
    leaves = list(_leaves(form_fields(COLLIDING)))
    names = [f.name for f in leaves]
    assert len(set(names)) == len(names) == 4, names
    ids = [f.id for f in _everything(form_fields(COLLIDING))]
    assert len(set(ids)) == len(ids), ids
    assert all(" " not in i and "." not in i for i in ids)
    posted = {f.name: f"value of {'/'.join(map(str, f.path))}" for f in leaves}
    assert validate_value(COLLIDING, posted) == {
        "a.b": "value of a.b",
        "a": {"b": "value of a/b"},
        "a-b": "value of a-b",
        "a~1b": "value of a~1b",
    }


def test_plain_names_and_ids_stay_as_they_were():
    field = form_fields(PEOPLE).children[1].children[0].children[0]
    assert (field.name, field.id) == ("f.people.0.name", "id-f-people-0-name")


def test_the_empty_rows_a_browser_shows_are_no_rows():
    posted = {"f.note": "", "f.people.0.name": "", "f.people.0.tags.0": "", "f.grid.0.0": ""}
    assert validate_value(PEOPLE, posted) == {"people": [], "grid": []}


def test_a_form_posted_without_rows_answers_empty_lists_not_its_spare_rows():
    assert validate_value(PEOPLE, {"f.note": "no people"}) == {"note": "no people", "people": [], "grid": []}


def test_a_filled_row_is_kept_and_empty_ones_between_are_dropped():
    posted = {
        "f.people.0.name": "",
        "f.people.0.tags.0": "",
        "f.people.1.name": "Ada",
        "f.people.1.tags.0": "",
        "f.people.1.tags.1": "lead",
        "f.grid.0.0": "",
        "f.grid.1.0": "x",
    }
    assert validate_value(PEOPLE, posted) == {"people": [{"name": "Ada", "tags": ["lead"]}], "grid": [["x"]]}


def test_an_error_in_a_row_after_an_empty_one_points_at_the_row_shown():
    posted = {"f.people.0.name": "", "f.people.0.tags.0": "", "f.people.1.name": "", "f.people.1.tags.0": "lead"}
    with pytest.raises(DecisionError) as caught:
        validate_value(PEOPLE, posted)
    assert caught.value.errors == [{"path": ["people", 1, "name"], "message": "This field is required."}]
    shown = form_fields(PEOPLE, posted, caught.value.errors)
    assert shown.children[1].children[1].children[0].errors == ["This field is required."]
    assert shown.children[1].children[0].children[0].errors == []


def test_min_items_counts_the_rows_filled_in():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "minItems": 2, "items": {"type": "string"}}}}
    assert len(form_fields(schema).children[0].children) == 4  # two rows and two spares
    with pytest.raises(DecisionError) as caught:
        validate_value(schema, {"f.tags.0": "a", "f.tags.1": " "})
    assert caught.value.errors == [{"path": ["tags"], "message": "Fill in at least 2 rows."}]
    assert validate_value(schema, {"f.tags.0": "a", "f.tags.1": "b"}) == {"tags": ["a", "b"]}


def test_an_unticked_box_in_a_list_of_booleans_is_still_an_answer():
    schema = {"type": "object", "properties": {"flags": {"type": "array", "items": {"type": "boolean"}}}}
    assert validate_value(schema, {"f.flags.0": "1", "f.flags.1": ""}) == {"flags": [True, False]}
