"""Idempotency keys, optional on every write: the same key and request get the first answer, and nothing runs
twice; a write without a key is not deduplicated."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from reviewconsole.api.models import IdempotencyRecord
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Event, WorkflowSession
from tests.api.conftest import REFUND, make_api_client, post

START = {"workflow": "refund-approval", "input": REFUND}


def test_the_same_key_and_body_get_the_first_answer(client, token, on_commit):
    with on_commit():
        first = post(client, "/api/v1/sessions", START, token, "k-1")
        second = post(client, "/api/v1/sessions", START, token, "k-1")
    assert (first.status_code, second.status_code) == (202, 202)
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"
    assert WorkflowSession.objects.count() == 1


def test_without_a_key_a_write_is_not_deduplicated(client, token, on_commit):
    """The key is optional: a POST without one is a new request each time (two sessions)."""
    with on_commit():
        first = post(client, "/api/v1/sessions", START, token)
        second = post(client, "/api/v1/sessions", START, token)
    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["session_id"] != second.json()["session_id"]
    assert not second.has_header("Idempotent-Replayed")
    assert WorkflowSession.objects.count() == 2
    assert not IdempotencyRecord.objects.exists()


def test_key_order_in_the_body_does_not_matter(client, token, on_commit):
    with on_commit():
        first = post(client, "/api/v1/sessions", START, token, "k-order")
        second = post(
            client,
            "/api/v1/sessions",
            {"input": dict(reversed(REFUND.items())), "workflow": "refund-approval"},
            token,
            "k-order",
        )
    assert second.json() == first.json()
    assert WorkflowSession.objects.count() == 1


def test_the_same_key_with_another_body_is_refused_with_422(client, token, on_commit):
    with on_commit():
        post(client, "/api/v1/sessions", START, token, "k-2")
    other = {"workflow": "refund-approval", "input": {**REFUND, "amount": 999.0}}
    response = post(client, "/api/v1/sessions", other, token, "k-2")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert WorkflowSession.objects.count() == 1


def test_keys_belong_to_one_client(client, token, on_commit):
    _, other_token = make_api_client("other")
    with on_commit():
        post(client, "/api/v1/sessions", START, token, "shared-key")
        post(client, "/api/v1/sessions", START, other_token, "shared-key")
    assert WorkflowSession.objects.count() == 2


def test_a_refused_write_keeps_no_record_so_a_retry_is_judged_afresh(client, token, on_commit):
    bad = {"workflow": "refund-approval", "input": {**REFUND, "amount": -1}}
    assert post(client, "/api/v1/sessions", bad, token, "k-3").status_code == 400
    assert not IdempotencyRecord.objects.exists()
    with on_commit():
        assert post(client, "/api/v1/sessions", bad | {"input": REFUND}, token, "k-3").status_code == 202


def test_a_replayed_resume_answers_again_and_resumes_once(client, token, on_commit):
    with on_commit():
        started = post(client, "/api/v1/sessions", START, token, "s")
    session_id = started.json()["session_id"]
    body = {"payload": {"status": "approved"}}
    with on_commit():
        first = post(client, f"/api/v1/sessions/{session_id}/resume", body, token, "r")
    events = Event.objects.filter(session_id=session_id).count()
    with on_commit():
        second = post(client, f"/api/v1/sessions/{session_id}/resume", body, token, "r")
    assert second.status_code == first.status_code == 202
    assert second.json() == first.json()
    assert Event.objects.filter(session_id=session_id).count() == events
    assert Item.objects.filter(session_id=session_id, function_name="ask_for_approval").count() == 1


@pytest.mark.parametrize("key", ["", " ", "x" * 201, "bad\nkey"])
def test_it_refuses_malformed_keys(client, token, key):
    response = post(client, "/api/v1/sessions", START, token, key)
    assert response.status_code == 400
    assert WorkflowSession.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_two_copies_at_the_same_moment_start_one_session(demo_tx):
    from django.test import Client

    _, token = make_api_client("racer")
    barrier = threading.Barrier(4)
    answers = []

    def send():
        barrier.wait()
        try:
            answers.append(post(Client(), "/api/v1/sessions", START, token, "race-key"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [a.status_code for a in answers] == [202] * 4
    assert len({a.json()["session_id"] for a in answers}) == 1
    assert WorkflowSession.objects.count() == 1
    assert IdempotencyRecord.objects.count() == 1
