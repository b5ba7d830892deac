"""A long-running approval the console knows (the refund's ``ask_for_approval``) takes only its two
answers: its tool reads anything but ``"approved"`` as a refusal, so a typo or free text would end
the refund rejected while the console recorded "answer". Another tool's long-running result is
the tool's to read, and goes through as sent."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from tests.api.conftest import post

REFUND = {"order_id": "B-2", "amount": 500.0, "reason": "Broken on arrival"}


def _resume(client, token, session, payload, on_commit):
    with on_commit():
        return post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": payload}, token)


@pytest.mark.parametrize("payload", [{"status": "approve"}, "shorter please", {"status": "pending"}, {}])
def test_a_refund_approval_refuses_any_other_answer_and_stores_nothing(
    client, token, start_session, on_commit, payload
):
    session, [item] = start_session("refund-approval", REFUND)
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "answer_invalid" and '"approved"' in error["accepted"]
    session.refresh_from_db()
    assert Item.objects.get(pk=item.pk).status == "pending" and session.status == "waiting"


@pytest.mark.parametrize(
    ("payload", "decision", "refused"),
    [({"status": "approved"}, "approve", False), ({"status": "rejected"}, "reject", True)],
)
def test_a_refund_approval_takes_its_two_answers(client, token, start_session, on_commit, payload, decision, refused):
    session, [item] = start_session("refund-approval", REFUND)
    response = _resume(client, token, session, payload, on_commit)
    assert response.status_code == 202, response.content
    assert Item.objects.get(pk=item.pk).decision == decision
    session.refresh_from_db()
    assert ("was not approved" in str(session.output)) is refused


def test_an_answer_naming_no_interrupt_that_lost_to_a_reviewer_is_told_who_decided(
    client, token, start_session, personas
):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    # The reviewer's answer is stored; its run (queued on commit) has not applied it yet.
    assert client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"}).status_code == 302
    client.logout()
    response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "no"}, token)
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "interrupt_decided" and error["interrupt_id"] == item.interrupt_id
    assert error["decided_by"] == personas.admin.get_username()
