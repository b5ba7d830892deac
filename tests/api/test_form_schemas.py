"""``POST /api/v1/reviews`` refuses a ``response_schema`` the inbox cannot draw as a form or take
the answer of: 400 ``schema_invalid`` naming where, and nothing stored."""

from __future__ import annotations

import pytest

from reviewconsole.api.models import Review
from reviewconsole.inbox.pages.schema_shape import OTHER_FIELDS
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.api.conftest import post

ASK = {"title": "Org chart", "message": "Draw the team", "queue": "support", "kind": "form"}
NODE = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}}
RECURSIVE = {
    "$defs": {"node": NODE},
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
}
RECURSIVE_LIST = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
}


def _grid(rows, columns):
    row = {"type": "array", "minItems": columns, "items": {"type": "string"}}
    return {"type": "object", "properties": {"rows": {"type": "array", "minItems": rows, "items": row}}}


@pytest.fixture
def ask(client, token, on_commit):
    def go(schema):
        before = Review.objects.count(), WorkflowSession.objects.count()
        with on_commit():
            response = post(client, "/api/v1/reviews", {**ASK, "response_schema": schema}, token)
        stored = (Review.objects.count(), WorkflowSession.objects.count()) != before
        return response, stored

    return go


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (RECURSIVE, "$defs/node/properties/child/$ref"),
        (RECURSIVE_LIST, "$defs/node/properties/kids/items/$ref"),
    ],
)
def test_a_ref_that_refers_to_itself_is_refused(ask, schema, where):
    response, stored = ask(schema)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "schema_invalid"
    assert error["message"] == (
        f"response_schema is not usable at {where}: a $ref that refers to itself cannot be drawn as a form."
    )
    assert error["errors"] == [
        {"path": where.split("/"), "message": "a $ref that refers to itself cannot be drawn as a form"}
    ]
    assert not stored


def test_a_form_with_more_fields_than_a_post_takes_is_refused(ask, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
    response, stored = ask(_grid(40, 40))
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "schema_invalid"
    assert f"its form would need more than {1000 - OTHER_FIELDS} fields" in error["message"]
    assert not stored
    response, stored = ask(_grid(20, 40))
    assert response.status_code == 201, response.content
    assert stored
