"""``POST /api/v1/sessions`` with a ``correlation_key``: input for a key whose session is open
follows the workflow's ``on_arrival`` (reject 409 ``session_waiting``, queue, supersede)."""

from __future__ import annotations

import dataclasses

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Arrival, WorkflowSession
from reviewconsole.workflows import registry
from tests.api.conftest import post

START = {"workflow": "vip-discount", "input": {"customer_id": "c123"}, "correlation_key": "case-7"}


def with_policy(monkeypatch, policy):
    specs = registry.current().specs
    monkeypatch.setitem(specs, "vip-discount", dataclasses.replace(specs["vip-discount"], on_arrival=policy))


def start(client, token, on_commit, body=START, key=None):
    with on_commit():
        return post(client, "/api/v1/sessions", body, token, key)


def test_reject_is_409_session_waiting_with_the_session_and_its_interrupt(client, token, on_commit):
    first = start(client, token, on_commit)
    assert first.status_code == 202
    session_id = first.json()["session_id"]
    item = Item.objects.get(session_id=session_id)
    second = start(client, token, on_commit, key="retry-1")
    assert second.status_code == 409
    error = second.json()["error"]
    assert (error["code"], error["session_id"], error["pending"], error["correlation_key"]) == (
        "session_waiting",
        session_id,
        [item.interrupt_id],
        "case-7",
    )
    assert WorkflowSession.objects.count() == 1
    [entry] = AuditEntry.objects.filter(action="session.arrival")
    assert (entry.actor, entry.target_id, entry.detail["outcome"]) == ("client:partner", session_id, "rejected")


def test_queue_answers_queued_and_starts_the_input_once_the_session_is_decided(
    client, token, on_commit, monkeypatch, personas
):
    with_policy(monkeypatch, "queue")
    session_id = start(client, token, on_commit).json()["session_id"]
    queued = start(client, token, on_commit)
    assert queued.status_code == 202, queued.content
    answer = queued.json()
    assert (answer["status"], answer["session_id"]) == ("queued", session_id)
    arrival = Arrival.objects.get(pk=answer["arrival_id"])
    assert arrival.status == "queued" and arrival.user_id == "client:partner"
    with on_commit():
        post(client, f"/api/v1/sessions/{session_id}/resume", {"payload": {"result": "yes"}}, token)
    arrival.refresh_from_db()
    assert arrival.status == "started" and arrival.started_session.correlation_key == "case-7"
    assert AuditEntry.objects.filter(action="session.arrival", detail__outcome="started").count() == 1


def test_supersede_answers_with_the_new_session_and_the_old_interrupt_is_superseded(
    client, token, on_commit, monkeypatch
):
    with_policy(monkeypatch, "supersede")
    old = start(client, token, on_commit).json()["session_id"]
    old_item = Item.objects.get(session_id=old)
    newer = start(client, token, on_commit)
    assert newer.status_code == 202 and newer.json()["superseded"] == [old]
    answer = {"interrupt_id": old_item.interrupt_id, "payload": {"result": "yes"}}
    late = post(client, f"/api/v1/sessions/{old}/resume", answer, token)
    assert late.status_code == 409, late.content
    old_item.refresh_from_db()
    assert old_item.display_status == "superseded" and old_item.decision != "approve"


def test_without_a_correlation_key_each_start_is_its_own_session(client, token, on_commit):
    body = {k: v for k, v in START.items() if k != "correlation_key"}
    assert start(client, token, on_commit, body).status_code == 202
    assert start(client, token, on_commit, body).status_code == 202
    assert WorkflowSession.objects.count() == 2
