"""A decision whose fields contradict each other is refused, never decided with a part dropped
(``inbox/items/ambiguity.py``): feedback with Approve or Reject, or feedback with an edited draft,
is ``400 decision_ambiguous`` naming the fields, in the inbox and the API; a changed draft box is
the reviewer's edit with or without the page's old ``edit_draft`` flag."""

from __future__ import annotations

import re

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pages.drafts import draft_of
from tests.api.conftest import make_api_client, post

COMPLAINT = {"complaint": "Parcel lost"}
EDITED = "Subject: Your parcel\n\nDear Ms Rivera,\n\nIt is on its way."
JSON = {"accept": "application/json"}


@pytest.fixture
def draft_item(client, manager, start_session):
    _, [item] = start_session("email-review", COMPLAINT)
    client.force_login(manager)
    return item


def _decide(client, item, data, on_commit, **kwargs):
    with on_commit():
        return client.post(f"/inbox/items/{item.pk}/decide/", data, **kwargs)


def _nothing_stored(item):
    item.refresh_from_db()
    assert item.is_pending and item.decision == "" and not item.session.answers.exists()


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"action": "approve", "feedback": "Mention the refund policy"}, ["feedback", "action"]),
        ({"action": "reject", "reason": "Wrong tone", "feedback": "Be kinder"}, ["feedback", "action"]),
        ({"action": "revise", "feedback": "Shorter please", "draft": EDITED}, ["draft", "feedback"]),
        (
            {"action": "approve", "feedback": "Shorter please", "draft": EDITED, "edit_draft": "1"},
            ["draft", "feedback"],
        ),
    ],
)
def test_feedback_with_another_decision_is_refused_naming_the_fields(client, draft_item, on_commit, data, fields):
    response = _decide(client, draft_item, data, on_commit, headers=JSON)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "decision_ambiguous" and "Nothing was recorded" in error["message"]
    assert error["fields"] == fields and [e["path"] for e in error["errors"]] == [[f] for f in fields]
    assert error["decision"] == data["action"]
    _nothing_stored(draft_item)


def test_the_page_comes_back_with_what_was_typed_and_the_error_next_to_each_field(client, draft_item, on_commit):
    data = {"action": "revise", "feedback": "Shorter <b>please</b>", "draft": EDITED, "edit_draft": "1"}
    response = _decide(client, draft_item, data, on_commit)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="error"' in page and "Your decision is ambiguous" in page
    feedback = re.search(r'<textarea id="feedback"[^>]*>([^<]*)</textarea>', page)
    assert feedback and 'aria-invalid="true"' in feedback.group(0) and "Shorter &lt;b&gt;please" in feedback.group(1)
    assert 'id="feedback-error"' in page and 'id="draft-error"' in page
    assert re.search(r'<details id="edit-box" open>', page)
    draft = re.search(r'<textarea id="edited-draft"[^>]*>([^<]*)</textarea>', page)
    assert draft and 'aria-invalid="true"' in draft.group(0) and "It is on its way." in draft.group(1)


def test_the_page_names_the_button_when_feedback_comes_with_approve(client, draft_item, on_commit):
    response = _decide(client, draft_item, {"action": "approve", "feedback": "Mention the refund"}, on_commit)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="action-error"' in page and "pressed Approve" in page
    assert re.search(r'<details id="edit-box">', page), "an unedited draft leaves the edit box folded"


def test_a_changed_draft_without_the_flag_is_approved_as_edited(client, draft_item, on_commit):
    response = _decide(client, draft_item, {"action": "approve", "draft": EDITED}, on_commit)
    assert response.status_code == 302
    draft_item.refresh_from_db()
    assert draft_item.response == {"result": "approve", "draft": EDITED}
    assert "+It is on its way." in draft_item.edit_diff


def test_what_the_page_sends_unedited_is_no_conflict(client, draft_item, on_commit):
    original = draft_of(draft_item)
    data = {"action": "revise", "feedback": "Shorter please", "draft": original.replace("\n", "\r\n")}
    response = _decide(client, draft_item, {**data, "edit_draft": "1"}, on_commit)
    assert response.status_code == 302
    assert Item.objects.get(pk=draft_item.pk).response == "Shorter please"


def test_a_rejection_with_an_edited_draft_rejects(client, draft_item, on_commit):
    data = {"action": "reject", "reason": "Off topic", "draft": EDITED, "edit_draft": "1"}
    response = _decide(client, draft_item, data, on_commit)
    assert response.status_code == 302
    draft_item.refresh_from_db()
    assert (draft_item.decision, draft_item.edit_diff) == ("reject", "")


def test_an_emptied_draft_is_not_approved_as_the_agents(client, draft_item, on_commit):
    response = _decide(client, draft_item, {"action": "approve", "draft": "\n\n"}, on_commit, headers=JSON)
    assert response.status_code == 400
    assert "edited draft is empty" in response.json()["error"]["message"]
    _nothing_stored(draft_item)


def test_a_draft_for_a_request_without_one_is_refused(client, manager, start_session, on_commit):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(manager)
    response = _decide(client, item, {"action": "approve", "draft": "Give 50%"}, on_commit, headers=JSON)
    assert response.status_code == 400
    assert "no draft to edit" in response.json()["error"]["message"]
    _nothing_stored(item)


@pytest.mark.parametrize(
    ("payload", "decision", "keys"),
    [
        ({"result": "approve", "feedback": "Mention the refund"}, "approve", ["feedback", "result"]),
        ({"result": "Reject", "feedback": "Be kinder"}, "reject", ["feedback", "result"]),
        ({"result": "approve", "draft": EDITED, "feedback": "x"}, "approve", ["feedback", "result"]),
        ({"result": "Shorter please", "draft": EDITED}, "revise", ["result", "draft"]),
    ],
)
def test_the_api_refuses_an_ambiguous_answer_naming_its_keys(client, start_session, on_commit, payload, decision, keys):
    session, [item] = start_session("email-review", COMPLAINT)
    _, token = make_api_client()
    with on_commit():
        response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["decision"], error["fields"]) == ("decision_ambiguous", decision, keys)
    assert [e["path"] for e in error["errors"]] == [["payload", k] for k in keys]
    _nothing_stored(item)
