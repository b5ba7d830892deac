"""Deciding a request a newer draft replaced says so and links the newer one (issue 13)."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from tests.api.conftest import make_api_client, post


@pytest.fixture
def revised(personas, start_session, on_commit):
    """An email review whose first draft got feedback: ``(session, old item, newer item)``."""
    session, [old] = start_session("email-review", {"complaint": "The parcel is late."})
    with on_commit():
        interrupt_decide(interrupt=old, user=personas.admin, action="revise", text="shorter")
    newer = Item.objects.get(session=session, status="pending")
    return session, Item.objects.get(pk=old.pk), newer


def test_the_inbox_says_superseded_and_links_the_newer_request(client, personas, revised):
    _, old, newer = revised
    client.force_login(personas.admin)
    page = client.post(f"/inbox/items/{old.pk}/decide/", {"action": "approve"})
    text = page.content.decode()
    assert page.status_code == 409 and "superseded: a newer request exists" in text
    assert f'href="/inbox/items/{newer.pk}/"' in text
    answer = client.post(
        f"/inbox/items/{old.pk}/decide/", {"action": "approve"}, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "superseded"
    assert answer.json()["error"]["newer_item"] == newer.pk
    assert Item.objects.get(pk=newer.pk).status == "pending"


def test_the_api_answers_interrupt_superseded(client, revised):
    session, old, newer = revised
    _, token = make_api_client()
    response = post(
        client, f"/api/v1/sessions/{session.id}/resume", {"interrupt_id": old.interrupt_id, "payload": "approve"}, token
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "interrupt_superseded" and "superseded: a newer request exists" in error["message"]
    assert error["newer_interrupt_id"] == newer.interrupt_id and error["url"] == f"/api/v1/sessions/{session.id}"


def test_a_decided_request_with_no_newer_one_still_names_its_decider(client, personas, start_session, on_commit):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.admin, action="approve")
    client.force_login(personas.admin)
    # another decision (the same one again is a no-op returning its receipt: test_call_binding.py)
    answer = client.post(
        f"/inbox/items/{item.pk}/decide/", {"action": "reject", "reason": "no"}, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "already_decided"
