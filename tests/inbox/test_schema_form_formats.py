"""Generated forms: ``format`` checked on the server and typed in the browser, labels and help
from ``title`` and ``description``, list rows named in the singular, spare rows for a page
without JavaScript."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from reviewconsole.demo.incident_triage import Triage
from reviewconsole.inbox.errors import DecisionError
from reviewconsole.inbox.pages.schema_form import form_fields, validate_value
from reviewconsole.inbox.pages.schema_formats import posted_value, shown_value

TRIAGE = Triage.model_json_schema()
VALID_TRIAGE = {
    "f.severity": '"low"',
    "f.summary": "Typo on the help page",
    "f.affected_customers": "0",
    "f.contact.name": "Ann",
}


def _flat(field):
    yield field
    for child in field.children:
        yield from _flat(child)


def _one(schema_format, raw):
    schema = {"type": "object", "properties": {"x": {"type": "string", "format": schema_format}}}
    return validate_value(schema, {"f.x": raw})


def test_the_triage_form_refuses_not_an_email_beside_the_field_and_keeps_it():
    data = {**VALID_TRIAGE, "f.contact.email": "not-an-email"}
    with pytest.raises(DecisionError) as caught:
        validate_value(TRIAGE, data)
    assert caught.value.errors == [
        {"path": ["contact", "email"], "message": "Enter an email address, e.g. name@example.com."}
    ]
    fields = {f.name: f for f in _flat(form_fields(TRIAGE, data, caught.value.errors))}
    assert fields["f.contact.email"].errors == ["Enter an email address, e.g. name@example.com."]
    assert fields["f.contact.email"].value == "not-an-email"  # what the reviewer typed
    assert fields["f.contact.email"].input_type == "email"
    assert validate_value(TRIAGE, {**data, "f.contact.email": "dana@example.com"})["contact"] == {
        "name": "Ann",
        "email": "dana@example.com",
    }


@pytest.mark.parametrize(
    ("schema_format", "good", "bad"),
    [
        ("email", ["a@example.com", "first.last+tag@mail.example.co.uk"], ["not-an-email", "a@b", "a b@c.d", "@x.io"]),
        ("uri", ["https://example.com/a?b=1", "mailto:a@example.com"], ["example dot com", "no-scheme", "http://[x"]),
        ("date", ["2026-12-31"], ["31/12/2026", "2026-02-30"]),
        ("date-time", ["2026-12-02T14:30:00Z", "2026-12-02T14:30:00.5+01:00"], ["2026-12-02", "yesterday"]),
    ],
)
def test_each_format_is_checked_on_the_server(schema_format, good, bad):
    for value in good:
        assert _one(schema_format, value) == {"x": value}
    for value in bad:
        with pytest.raises(DecisionError) as caught:
            _one(schema_format, value)
        assert caught.value.errors[0]["path"] == ["x"]
        assert caught.value.errors[0]["message"].startswith("Enter a")


@pytest.mark.parametrize(
    ("schema_format", "kind"),
    [("email", "email"), ("uri", "url"), ("date", "date"), ("date-time", "datetime-local"), ("hostname", "text")],
)
def test_each_format_gets_its_html_input_type(schema_format, kind):
    schema = {"type": "object", "properties": {"x": {"type": "string", "format": schema_format}}}
    assert form_fields(schema).children[0].input_type == kind


def test_a_date_time_is_typed_in_the_reviewers_zone_and_stored_with_its_offset():
    with timezone.override("Europe/Paris"):
        assert posted_value("date-time", "2026-12-02T14:30") == "2026-12-02T14:30:00+01:00"
        assert _one("date-time", "2026-07-01T09:05") == {"x": "2026-07-01T09:05:00+02:00"}
        assert shown_value("date-time", "2026-12-02T13:30:00Z") == "2026-12-02T14:30"
        schema = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
        field = form_fields(schema, None, None)
        assert field.children[0].value == ""
        start = dt.datetime(2026, 12, 2, 13, 30, 15, tzinfo=dt.UTC).isoformat()
        shown = form_fields({**schema, "properties": {"at": {**schema["properties"]["at"], "default": start}}})
        assert shown.children[0].value == "2026-12-02T14:30:15"


def test_labels_are_titles_help_is_the_description_and_rows_are_named_in_the_singular():
    fields = {f.name: f for f in _flat(form_fields(TRIAGE))}
    assert fields["f.affected_customers"].label == "Affected Customers"
    assert fields["f.affected_customers"].description == "An estimate is fine."
    assert fields["f.contact"].description == "Who follows the incident up."
    assert [row.label for row in fields["f.components"].children] == ["Component 1", "Component 2", "Component 3"]
    assert fields["f.components"].template.label == "Component __number__"
    schema = {
        "type": "object",
        "properties": {
            "people": {
                "type": "array",
                "title": "Who was there",
                "items": {"type": "object", "title": "Witness", "properties": {"name": {"type": "string"}}},
            },
            "categories": {"type": "array", "items": {"type": "string"}},
        },
    }
    fields = {f.name: f for f in _flat(form_fields(schema))}
    assert fields["f.people.0"].label == "Witness 1"  # the items' title
    assert fields["f.categories.1"].label == "Category 2"  # the singular of the list's label


def test_spare_rows_stop_at_max_items_and_are_left_out_when_empty():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}}
    rows = form_fields(schema).children[0].children
    assert [(row.name, row.spare) for row in rows] == [("f.tags.0", False), ("f.tags.1", True)]
    assert validate_value(schema, {"f.tags.0": "a", "f.tags.1": ""}) == {"tags": ["a"]}
    posted = form_fields(schema, {"f.tags.0": "a", "f.tags.1": ""}).children[0].children
    assert [row.spare for row in posted] == [False, False]  # a post's rows are the reviewer's
