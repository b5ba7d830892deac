"""Generated forms never show or store the text "None": a null or missing value is an empty field,
and an empty optional field is left out of the answer (or null where the schema needs the key)."""

from __future__ import annotations

import re
from html import unescape
from typing import Literal

from pydantic import BaseModel

from reviewconsole.demo.incident_triage import Triage
from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pages.schema_form import form_fields, validate_value


def _flat(field):
    yield field
    for child in field.children:
        yield from _flat(child)


def _fields(schema, data=None):
    return {f.name: f for f in _flat(form_fields(schema, data))}


class Optionals(BaseModel):
    """One optional field of each kind, all defaulting to null, and one required but nullable."""

    note: str | None = None
    count: int | None = None
    ratio: float | None = None
    urgent: bool | None = None
    level: Literal["low", "high"] | None = None
    tags: list[str] | None = None
    extra: int | str | None = None  # edited as JSON
    due: str | None  # required, may be null


class Defaults(BaseModel):
    size: int = 3
    loud: bool = True
    colour: Literal["red", "blue"] = "blue"
    names: list[str] = ["a", "b"]


def _posted(fields):
    """What a browser posts for these fields as rendered (checked boxes only)."""
    data = {}
    for name, f in fields.items():
        if f.is_group or name == "f":
            continue
        if f.kind == "boolean":
            if f.checked:
                data[name] = "1"
        else:
            data[name] = f.value
    return data


def test_the_triage_form_shows_an_empty_email_and_leaves_it_out_of_the_answer():
    schema = Triage.model_json_schema()
    fields = _fields(schema)
    assert fields["f.contact.email"].value == ""
    data = _posted(fields) | {
        "f.severity": '"low"',
        "f.summary": "Checkout is slow",
        "f.affected_customers": "3",
        "f.contact.name": "Dana",
    }
    assert validate_value(schema, data)["contact"] == {"name": "Dana"}


def test_null_defaults_of_every_kind_render_empty_and_post_back_as_nothing():
    schema = Optionals.model_json_schema()
    fields = _fields(schema)
    shown = {name: (f.value, f.checked) for name, f in fields.items() if not f.is_group and name != "f"}
    assert shown == {
        "f.note": ("", False),
        "f.count": ("", False),
        "f.ratio": ("", False),
        "f.urgent": ("", False),
        "f.level": ("", False),
        "f.tags.0": ("", False),
        "f.tags.1": ("", False),  # spare rows, for a page without JavaScript
        "f.tags.2": ("", False),
        "f.extra": ("", False),
        "f.due": ("", False),
    }
    assert all("None" not in f.value for f in fields.values())
    # Posted back untouched: nothing is stored as "None"; the required nullable key is null.
    assert validate_value(schema, _posted(fields)) == {"urgent": False, "tags": [], "due": None}


def test_real_defaults_still_start_their_fields():
    fields = _fields(Defaults.model_json_schema())
    assert fields["f.size"].value == "3"
    assert fields["f.loud"].checked is True
    assert fields["f.colour"].value == '"blue"'
    assert [fields[f"f.names.{i}"].value for i in (0, 1)] == ["a", "b"]


def test_the_incident_form_on_the_item_page_stores_no_none(client, personas, start_session, on_commit):
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    client.force_login(personas.admin)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    email = re.search(r'<input [^>]*name="f\.contact\.email"[^>]*>', page).group(0)
    assert 'value=""' in email
    assert "None" not in unescape(" ".join(re.findall(r'value="([^"]*)"', page)))
    data = {
        "action": "answer",
        "f.severity": '"low"',
        "f.summary": "Checkout is slow for some",
        "f.affected_customers": "0",
        "f.components.0": "",
        "f.contact.name": "Dana",
        "f.contact.email": re.search(r'value="([^"]*)"', email).group(1),
    }
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/decide/", data)
    assert response.status_code == 302
    answer = Item.objects.get(pk=item.pk).response
    assert answer["contact"] == {"name": "Dana"}
