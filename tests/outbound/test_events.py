"""Outbound events reach a real receiver, signed (Standard Webhooks), after the engine's commits."""

from __future__ import annotations

import pytest
from standardwebhooks.webhooks import Webhook

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.outbound.models import OutboundMessage, Subscription
from reviewconsole.workflow_sessions.llm import configured_model
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import post_webhook


def test_a_review_sends_created_resolved_and_completed(subscription, receiver, start_review, manager, on_commit):
    session, interrupt = start_review()
    assert receiver.types() == ["interrupt.created"]
    with on_commit():
        interrupt_decide(interrupt=interrupt, user=manager, action="approve")
    assert receiver.types() == ["interrupt.created", "interrupt.resolved", "session.completed"]
    created, resolved, completed = (r.json for r in receiver.received)
    assert created["data"]["interrupt_id"] == interrupt.interrupt_id
    assert created["data"]["queue"] == "support"
    assert (resolved["data"]["decided_by"], resolved["data"]["response"]) == ("manager", "approve")
    assert completed["data"] == {
        "session_id": session.id,
        "workflow": "email-review",
        "status": "completed",
        "output": session.__class__.objects.get(pk=session.pk).output,
    }
    assert set(OutboundMessage.objects.values_list("status", flat=True)) == {"delivered"}


def test_every_message_is_signed_and_verifiable(subscription, receiver, start_review):
    start_review()
    request = receiver.received[0]
    assert request.headers["content-type"] == "application/json"
    Webhook(subscription.secret).verify(request.body, request.headers)  # raises if the signature is wrong
    assert request.headers["webhook-id"] == OutboundMessage.objects.get().pk
    with pytest.raises(Exception):  # noqa: B017 (any verification error will do)
        Webhook("whsec_" + "QUFB" * 8).verify(request.body, request.headers)


def test_a_failing_session_sends_session_failed(subscription, receiver, client, monkeypatch, on_commit):
    def broken(request):
        raise RuntimeError("the model is down")

    monkeypatch.setitem(configured_model().policies, "draft_email", broken)
    with on_commit():
        response = post_webhook(client, {"complaint": "It broke"})
    assert response.status_code == 202
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    assert session.status == "failed"
    failed = [r.json for r in receiver.received if r.json["type"] == "session.failed"]
    assert len(failed) == 1
    assert failed[0]["data"]["session_id"] == session.id
    assert "the model is down" not in str(failed[0])  # the exception text stays in the server log


def test_only_the_chosen_events_and_workflows(demo, receiver, start_review, manager, on_commit):
    Subscription.objects.create(name="only-done", url=receiver.url, events=["session.completed"])
    Subscription.objects.create(
        name="other-wf", url=receiver.url, events=["interrupt.created"], workflows=["vip-discount"]
    )
    Subscription.objects.create(name="off", url=receiver.url, events=["interrupt.created"], enabled=False)
    _session, interrupt = start_review()
    assert receiver.received == []
    with on_commit():
        interrupt_decide(interrupt=interrupt, user=manager, action="reject", reason="not needed")
    assert receiver.types() == ["session.completed"]


def test_a_broken_receiver_never_breaks_the_run(demo, start_review, manager, on_commit):
    Subscription.objects.create(name="dead", url="http://127.0.0.1:9/never", events=["interrupt.created"])
    _session, interrupt = start_review()  # the run committed and the item is pending
    assert interrupt.status == "pending"
    message = OutboundMessage.objects.get()
    assert message.attempts == 1
    assert message.attempt_log.get().status_code is None
    assert "ConnectError" in message.last_error
