"""API token scopes (issue 13): ``own_sessions`` limits a token to the sessions its client started;
a reviewer's claim is respected unless the token has ``override_claims``."""

from __future__ import annotations

from reviewconsole.api.models import ApiClient
from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.models import Item
from tests.api.conftest import auth, make_api_client, post


def _scoped(name, *scopes):
    client, token = make_api_client(name)
    ApiClient.objects.filter(pk=client.pk).update(scopes=list(scopes))
    return token


def test_an_own_sessions_token_sees_only_its_clients_sessions(client, demo, on_commit, start_session):
    other, _ = start_session("vip-discount", {"customer_id": "c123"})  # started by someone else
    token = _scoped("crm", "own_sessions")
    with on_commit():
        started = post(
            client, "/api/v1/sessions", {"workflow": "vip-discount", "input": {"customer_id": "c123"}}, token
        )
    mine = started.json()["session_id"]
    assert client.get(f"/api/v1/sessions/{mine}", headers=auth(token)).status_code == 200
    assert client.get(f"/api/v1/sessions/{other.id}", headers=auth(token)).status_code == 404
    listed = client.get("/api/v1/interrupts", headers=auth(token)).json()["interrupts"]
    assert {row["session_id"] for row in listed} == {mine}
    refused = post(client, f"/api/v1/sessions/{other.id}/resume", {"payload": "yes"}, token)
    assert refused.status_code == 404
    assert Item.objects.get(session=other).status == "pending"


def test_a_token_without_a_scope_still_sees_every_session_of_its_workflows(client, demo, start_session):
    other, _ = start_session("vip-discount", {"customer_id": "c123"})
    token = _scoped("wide")
    assert client.get(f"/api/v1/sessions/{other.id}", headers=auth(token)).status_code == 200


def test_a_reviewers_claim_is_respected_unless_the_token_may_override(client, personas, start_session, on_commit):
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    interrupt_claim(interrupt=item, user=personas.admin)
    plain = _scoped("plain")
    refused = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "yes"}, plain)
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "interrupt_claimed" and error["claimed_by"] == personas.admin.get_username()
    assert not session.answers.exists()
    override = _scoped("ops", "override_claims")
    with on_commit():
        taken = post(client, f"/api/v1/sessions/{session.id}/resume", {"payload": "yes"}, override)
    assert taken.status_code == 202
    assert Item.objects.get(pk=item.pk).status == "resolved"
