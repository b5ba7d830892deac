"""One reading of an API answer: the decision the console records is the one the workflow takes.

Each answer is classified once (``inbox.answers.read_answer``): an accepted shape is stored
normalised (what the inbox sends for that decision) with its decision in the item and the audit;
anything else is ``400 answer_invalid`` and nothing is stored.
"""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from tests.api.conftest import post
from tests.conftest import texts

COMPLAINT = {"complaint": "My parcel arrived broken."}


def _delivered(payload):
    """What the workflow receives for a stored payload (the engine unwraps a one-key ``result``)."""
    return payload["result"] if set(payload) == {"result"} else payload


def _resume(client, token, session, payload, on_commit):
    with on_commit():
        return post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)


@pytest.mark.parametrize(
    ("payload", "decision", "stored", "reason", "outcome"),
    [
        ({"result": "reject", "reason": "bad tone"}, "reject", {"result": "reject"}, "bad tone", "Draft rejected."),
        ("reject", "reject", {"result": "reject"}, "", "Draft rejected."),
        ({"result": " Approve "}, "approve", {"result": "approve"}, "", "Draft approved and sent successfully."),
        ("make it shorter", "revise", {"result": "make it shorter"}, "", None),
    ],
)
def test_an_accepted_answer_is_stored_normalised_with_its_decision(
    client, token, start_session, on_commit, payload, decision, stored, reason, outcome
):
    session, [item] = start_session("email-review", COMPLAINT)
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 202, response.content
    row = Item.objects.get(pk=item.pk)
    assert (row.decision, row.response, row.reason) == (decision, _delivered(stored), reason)
    entry = AuditEntry.objects.filter(action="interrupt.decide").latest("id")
    assert entry.after["decision"] == decision and entry.after["response"] == stored
    session.refresh_from_db()
    pending = Item.objects.filter(session=session, status="pending")
    if outcome is None:  # revised: a new draft waits, applying the feedback
        assert pending.count() == 1 and session.state["feedback"] == "make it shorter"
    else:
        assert session.status == "completed" and not pending.exists() and texts(session)[-1] == outcome


def test_an_edited_draft_is_approved_as_edited(client, token, start_session, on_commit):
    session, [item] = start_session("email-review", COMPLAINT)
    response = _resume(client, token, session, {"result": "approve", "draft": "Hello,\r\n\r\nFixed."}, on_commit)
    assert response.status_code == 202
    row = Item.objects.get(pk=item.pk)
    assert row.decision == "approve" and row.response == {"result": "approve", "draft": "Hello,\n\nFixed."}
    assert AuditEntry.objects.filter(action="interrupt.decide").latest("id").after["decision"] == "approve"
    assert "+Fixed." in row.edit_diff
    session.refresh_from_db()
    assert session.status == "completed" and session.state["draft"] == "Hello,\n\nFixed."


@pytest.mark.parametrize(
    "payload",
    [
        {"timeout": True},
        False,
        True,
        {"result": "approve", "draft": "  "},
        {"result": "approve", "note": "x"},
        {"result": "reject", "draft": "x"},
        {"result": "approve", "reason": "x"},
        {"result": 1},
        {"result": "shorter " * 20_000, "x": 1},
        ["approve"],
        {"confirmed": True},
    ],
)
def test_an_answer_of_another_shape_is_refused_and_nothing_stored(client, token, start_session, on_commit, payload):
    session, [item] = start_session("email-review", COMPLAINT)
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "answer_invalid" and '"draft"' in error["message"]
    assert Item.objects.get(pk=item.pk).status == "pending" and not session.answers.exists()


def test_text_inside_a_result_is_held_to_its_maximum(client, token, start_session, on_commit):
    session, _ = start_session("email-review", COMPLAINT)
    response = _resume(client, token, session, {"result": "shorter " * 20_000}, on_commit)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_too_long"
    assert not session.answers.exists()


def test_crlf_line_breaks_count_once(client, token, start_session, on_commit):
    session, [item] = start_session("email-review", COMPLAINT)
    feedback = "x\r\n" * 2_000  # 6,000 raw characters, 4,000 once line breaks are one each
    response = _resume(client, token, session, feedback, on_commit)
    assert response.status_code == 202
    assert Item.objects.get(pk=item.pk).response == feedback.replace("\r\n", "\n").strip()


@pytest.mark.parametrize(
    ("payload", "decision", "discount"),
    [
        ("yes", "approve", "20% off"),
        (True, "approve", "20% off"),
        ({"confirmed": True}, "approve", "20% off"),
        ({"result": "no"}, "reject", "5% off (VIP declined)"),
        ({"approved": False}, "reject", "5% off (VIP declined)"),
        ({"result": "reject", "reason": "not a VIP"}, "reject", "5% off (VIP declined)"),
    ],
)
def test_a_vip_confirmation_is_read_once(client, token, start_session, on_commit, payload, decision, discount):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 202, response.content
    row = Item.objects.get(pk=item.pk)
    assert row.decision == decision and row.response == decision
    session.refresh_from_db()
    assert session.status == "completed" and discount in str(session.output)


@pytest.mark.parametrize(
    "payload",
    [
        {"confirmed": False, "text": "yes"},
        {"confirmed": True, "text": "no"},
        {"confirmed": {"x": 1}},
        {"text": "yes", "reason": "x"},
        3,
    ],
)
def test_an_ambiguous_vip_answer_is_refused(client, token, start_session, on_commit, payload):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 400 and response.json()["error"]["code"] == "answer_invalid"
    assert Item.objects.get(pk=item.pk).status == "pending" and not session.answers.exists()
