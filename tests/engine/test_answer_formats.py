"""An answer's strings are checked against their ``format`` (``email``, ``uri``, ``date``,
``date-time``) by the engine itself, so every door that resumes a session refuses them alike:
``AnswerInvalidError`` naming the field and what the value should look like, never the value."""

from __future__ import annotations

import pytest

from engine import AnswerInvalidError, InterruptKind, normalize_answer

CONTACT = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "on": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
    },
}
GOOD = {"email": "dana@example.com", "site": "https://example.com/a", "on": "2026-12-31", "at": "2026-12-31T14:30:00Z"}


def test_an_answer_in_its_formats_passes_as_sent():
    assert normalize_answer(InterruptKind.INPUT, GOOD, CONTACT) == GOOD
    assert normalize_answer(InterruptKind.INPUT, {"result": GOOD}, CONTACT) == GOOD


@pytest.mark.parametrize(
    ("field", "bad", "expected"),
    [
        ("email", "dana@", "not an email address, e.g. name@example.com"),
        ("email", "secret token@example.com", "not an email address, e.g. name@example.com"),
        ("site", "example dot com", "not a full address with its scheme, e.g. https://example.com/page"),
        ("on", "31/12/2026", "not a date, e.g. 2026-12-31"),
        ("at", "2027-01-05T09:15", "not a date and time with its offset, e.g. 2026-12-31T14:30:00+01:00"),
        # a trailing newline ("$" matches before it): found by an attack, stored as sent in every door
        ("email", "dana@example.com\n", "not an email address, e.g. name@example.com"),
        ("on", "2026-12-31\n", "not a date, e.g. 2026-12-31"),
        ("at", "2026-12-31T14:30:00Z\n", "not a date and time with its offset, e.g. 2026-12-31T14:30:00+01:00"),
    ],
)
def test_a_value_out_of_its_format_is_refused_naming_the_field(field, bad, expected):
    with pytest.raises(AnswerInvalidError) as caught:
        normalize_answer(InterruptKind.INPUT, {**GOOD, field: bad}, CONTACT)
    assert caught.value.details["errors"] == [{"path": [field], "message": expected}]
    assert bad not in str(caught.value.details)  # the value is not repeated back


def test_nested_fields_and_every_failing_one_are_listed():
    schema = {"type": "object", "properties": {"contacts": {"type": "array", "items": CONTACT}}}
    answer = {"contacts": [GOOD, {**GOOD, "email": "x", "on": "tomorrow"}]}
    with pytest.raises(AnswerInvalidError) as caught:
        normalize_answer(InterruptKind.INPUT, answer, schema)
    assert [e["path"] for e in caught.value.details["errors"]] == [["contacts", 1, "email"], ["contacts", 1, "on"]]


def test_a_format_applies_to_strings_only_and_a_cancel_skips_it():
    schema = {"type": ["string", "integer"], "format": "email"}
    assert normalize_answer(InterruptKind.INPUT, 42, schema) == 42
    assert normalize_answer(InterruptKind.INPUT, {"cancelled": True}, CONTACT) == {"cancelled": True}
