"""One serialiser per resource (issue 13, point 4): the API, outbound events, the session JSON,
``items.json`` and live messages all show an item as ``item_json`` does, a session as
``session_json`` does."""

from __future__ import annotations

from reviewconsole.api.schemas import InterruptOut, SessionOut
from reviewconsole.inbox.items.serializers import item_json, list_entry
from reviewconsole.inbox.models import Item
from reviewconsole.outbound.outbox_consumer import interrupt_data
from reviewconsole.workflow_sessions.serializers import session_json
from tests.api.conftest import auth, make_api_client

OUTBOUND_KEYS = {
    "interrupt_id",
    "session_id",
    "workflow",
    "kind",
    "function_name",
    "queue",
    "status",
    "message",
    "payload",
    "response",
    "decision",
    "decided_by",
    "decided_at",
    "created_at",
}


def _decided(client, personas, start_review, on_commit):
    session, item = start_review()
    client.force_login(personas.reviewer)
    client.post(f"/inbox/items/{item.pk}/claim/")
    with on_commit():  # the relay builds the item's decision from the outbox after the commit
        answer = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "revise", "feedback": "shorter"})
    assert answer.status_code == 302
    return session, Item.objects.select_related("queue", "session", "claimed_by").get(pk=item.pk)


def test_the_api_shows_the_item_and_the_session_as_their_serialisers_do(client, personas, start_review, on_commit):
    session, item = _decided(client, personas, start_review, on_commit)
    _, token = make_api_client()
    read = client.get(f"/api/v1/sessions/{session.id}", headers=auth(token)).json()
    session.refresh_from_db()
    shown = session_json(session)
    assert read == {**{k: shown[k] for k in SessionOut.model_fields if k in shown}, "interrupts": read["interrupts"]}
    first = item_json(item)
    assert read["interrupts"][0] == {k: first[k] for k in InterruptOut.model_fields}
    assert (first["id"], first["decided_by"], first["reason"]) == (item.interrupt_id, "p-reviewer", None)
    listed = client.get("/api/v1/interrupts?status=resolved", headers=auth(token)).json()["interrupts"]
    assert listed == [read["interrupts"][0]]


def test_the_session_json_shows_the_same_session_and_items(client, personas, start_review, on_commit):
    session, item = _decided(client, personas, start_review, on_commit)
    client.force_login(personas.admin)
    shown = client.get(f"/api/sessions/{session.id}/").json()
    session.refresh_from_db()
    items = Item.objects.filter(session=session).select_related("queue", "session", "claimed_by").order_by("id")
    assert shown == {**session_json(session), "interrupts": [item_json(i) for i in items]}
    assert shown["interrupts"][0]["url"] == f"/inbox/items/{item.pk}/"


def test_outbound_events_keep_their_keys_and_take_the_items_values(client, personas, start_review, on_commit):
    _, item = _decided(client, personas, start_review, on_commit)
    data = interrupt_data(item)
    assert set(data) == OUTBOUND_KEYS
    full = item_json(item)
    assert data == {"interrupt_id": full["id"], **{k: full[k] for k in OUTBOUND_KEYS - {"interrupt_id"}}}


def test_the_list_entry_is_the_item_with_the_inboxs_row_id_and_its_presentation(
    client, personas, start_review, on_commit
):
    _, item = start_review()
    client.force_login(personas.reviewer)
    [row] = client.get("/inbox/items.json").json()["items"]
    full = item_json(Item.objects.select_related("queue", "session", "claimed_by").get(pk=item.pk))
    assert {k: v for k, v in row.items() if k in full and k != "id"} == {k: v for k, v in full.items() if k != "id"}
    assert (row["id"], row["item_id"], row["interrupt_id"]) == (item.pk, item.pk, item.interrupt_id)
    assert row["snippet"] and row["sentence"] == "Waiting for a decision."
    assert set(row) - set(full) == {
        "interrupt_id",
        "queue_id",
        "queue_name",
        "state",
        "sentence",
        "snippet",
        "overdue",
        "bulk_approve",
        "row",  # the snapshot's: the row's HTML, as the page renders it (pages/rows.py)
    }
    assert "row" not in list_entry(item)
    assert list_entry(item)["id"] == item.pk
