"""The API refuses an answer its request kind does not support (issue 17): 400 ``action_not_supported``."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from tests.api.conftest import post


@pytest.fixture
def vip(start_session):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    return session, item


def test_feedback_text_to_a_vip_confirmation_is_not_supported(client, token, vip, on_commit):
    session, item = vip
    with on_commit():
        response = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "make it 25%"}, token)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "action_not_supported" and error["actions"] == ["approve", "reject"]
    assert Item.objects.get(pk=item.pk).status == "pending" and not session.answers.exists()


def test_a_yes_or_no_to_a_vip_confirmation_is_taken(client, token, vip, on_commit):
    session, item = vip
    with on_commit():
        response = post(
            client,
            f"/api/v1/sessions/{session.id}/resume",
            {"interrupt_id": item.interrupt_id, "payload": "yes"},
            token,
        )
    assert response.status_code == 202
    session.refresh_from_db()
    assert session.status == "completed" and "20% off" in str(session.output)
