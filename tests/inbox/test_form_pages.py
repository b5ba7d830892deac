"""An item page whose form schema is awkward still renders: a schema stored before the API refused
recursive ones says why it has no form and takes the other decisions; an extreme ``date-time``
default is shown as given."""

from __future__ import annotations

from html import unescape

import pytest

from reviewconsole.inbox.models import Item
from tests.api.conftest import make_api_client, post

ASK = {"title": "Org chart", "message": "Draw the team", "queue": "support", "kind": "form"}
NODE = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}}
RECURSIVE = {"$defs": {"node": NODE}, "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}}
JSON = {"Accept": "application/json"}


@pytest.fixture
def ask(client, demo, on_commit):
    _, token = make_api_client()

    def go(schema):
        with on_commit():
            response = post(client, "/api/v1/reviews", {**ASK, "response_schema": schema}, token)
        assert response.status_code == 201, response.content
        return Item.objects.get(session_id=response.json()["session_id"], status="pending")

    return go


@pytest.fixture
def recursive_item(ask):
    """A pending form item whose stored schema refers to itself (as one asked before the API refused it)."""
    item = ask({"type": "object", "properties": {"root": {"type": "string"}}})
    Item.objects.filter(pk=item.pk).update(response_schema=RECURSIVE)
    return item


def test_an_item_whose_form_cannot_be_drawn_says_so(client, manager, recursive_item):
    client.force_login(manager)
    response = client.get(f"/inbox/items/{recursive_item.pk}/")
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert 'id="form-problem"' in page
    assert "a $ref that refers to itself cannot be drawn as a form, at $defs/node/properties/child/$ref" in page
    assert 'id="schema-form"' not in page and 'id="answer"' not in page
    assert 'id="cancel-form"' in page and 'id="escalate-form"' in page


def test_an_answer_to_it_is_refused_and_a_cancellation_is_taken(client, manager, recursive_item, on_commit):
    client.force_login(manager)
    url = f"/inbox/items/{recursive_item.pk}/decide/"
    ids = {"interrupt_id": recursive_item.interrupt_id}
    answered = client.post(url, {**ids, "action": "answer", "f.root.name": "x"}, headers=JSON)
    assert answered.status_code == 400, answered.content
    assert "form cannot be drawn" in answered.json()["error"]["message"]
    with on_commit():
        cancelled = client.post(f"/inbox/items/{recursive_item.pk}/cancel/", {"reason": "Its form cannot be drawn"})
    assert cancelled.status_code == 302, cancelled.content
    recursive_item.refresh_from_db()
    assert (recursive_item.decision, recursive_item.reason) == ("cancelled", "Its form cannot be drawn")


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00"])
def test_a_date_time_default_with_no_local_time_is_shown_as_given(client, manager, ask, moment):
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time", "default": moment}}}
    item = ask(schema)
    client.force_login(manager)
    response = client.get(f"/inbox/items/{item.pk}/")
    assert response.status_code == 200
    assert f'name="f.when" value="{moment}"' in response.content.decode()
