"""An API review's item page: what each kind shows and takes, a revision's diff, the superseded one."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from tests.api.conftest import make_api_client, post

ASK = {"title": "Reply to Ada", "message": "Check this reply", "queue": "support"}
SCHEMA = {"type": "object", "properties": {"severity": {"type": "string", "enum": ["low", "high"]}}}


@pytest.fixture
def ask(client, demo, on_commit):
    _, token = make_api_client()

    def go(**changes):
        with on_commit():
            response = post(client, "/api/v1/reviews", {**ASK, **changes}, token)
        assert response.status_code == 201, response.content
        body = response.json()
        return body, Item.objects.get(session_id=body["session_id"], status="pending")

    return go


@pytest.mark.parametrize(
    ("changes", "shown", "hidden"),
    [
        ({"kind": "text"}, ['id="approve"', 'id="reject"', 'id="revise"', 'id="feedback"'], ['id="edit-box"']),
        (
            {"kind": "confirm", "payload": {"amount": 250}},
            ['id="approve"', 'id="reject"', 'id="payload"'],
            ['id="revise"'],
        ),
        (
            {"kind": "draft", "payload": {"draft": "Dear Ada,\nsorry."}},
            ['id="edit-box"', 'id="draft"', "Dear Ada,", 'id="revise"'],
            ['id="payload"'],
        ),
        ({"response_schema": SCHEMA}, ['id="schema-form"', 'id="answer"', "f.severity"], ['id="approve"']),
    ],
)
def test_each_kind_shows_what_it_takes(client, manager, ask, changes, shown, hidden):
    _, item = ask(**changes)
    client.force_login(manager)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    for text in shown:
        assert text in page
    for text in hidden:
        assert text not in page


def test_what_a_caller_wrote_is_escaped(client, manager, ask):
    _, item = ask(kind="confirm", message="<script>alert(1)</script>", payload={"x": "<img src=x onerror=alert(1)>"})
    client.force_login(manager)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_revision_shows_the_diff_and_the_older_item_is_superseded(client, manager, ask, on_commit):
    older, old_item = ask(kind="draft", payload={"draft": "Dear Ada,\nsorry.\n"})
    _, new_item = ask(kind="draft", payload={"draft": "Dear Ada,\nwe are very sorry.\n"}, revision_of=older["id"])
    client.force_login(manager)
    page = client.get(f"/inbox/items/{new_item.pk}/").content.decode()
    assert 'id="revision-diff"' in page
    assert f'href="/inbox/items/{old_item.pk}/"' in page
    assert "we are very sorry." in page
    old_item.refresh_from_db()
    assert old_item.display_status == "superseded"
    refused = client.post(
        f"/inbox/items/{old_item.pk}/decide/", {"action": "approve"}, headers={"Accept": "application/json"}
    )
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "superseded"
    assert error["newer_url"] == f"/inbox/items/{new_item.pk}/"
    assert "superseded: a newer request exists" in error["message"]
