"""``review.decided``: a review's decision to its ``callback_url`` (signed with the API client's
webhook secret) and to subscriptions, once per decision and receiver, retried, never to a revoked client."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from engine import AlreadyDecidedError
from reviewconsole.api.models import ApiClient
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.outbound.models import OutboundMessage, Subscription
from reviewconsole.workflow_sessions.outbox import relay
from tests.api.conftest import make_api_client, post

ASK = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", "payload": {"amount": 250}}
DEADLINE = 30  # seconds a racing thread may take before the test gives up on it


def ask(client, token, receiver, **changes):
    response = post(client, "/api/v1/reviews", {**ASK, "callback_url": receiver.url, **changes}, token)
    assert response.status_code == 201, response.content
    return response.json()


def item_of(body):
    return Item.objects.select_related("session", "queue").get(session_id=body["session_id"], status="pending")


def decided(receiver):
    return [r for r in receiver.received if r.json["type"] == "review.decided"]


def test_the_decision_reaches_the_callback_signed_with_the_clients_secret(client, receiver, manager, on_commit):
    api_client, token = make_api_client()
    with on_commit():
        body = ask(client, token, receiver)
    assert receiver.received == []  # nothing before the decision
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
    [request] = decided(receiver)
    Webhook(api_client.webhook_secret).verify(request.body, request.headers)  # raises if wrong
    event = request.json
    assert event["data"]["id"] == body["id"]
    assert event["data"]["status"] == "decided"
    assert (event["data"]["decision"]["action"], event["data"]["decision"]["by"]) == ("approve", "manager")
    assert event["data"]["url"] == f"http://testserver/api/v1/reviews/{body['id']}"
    message = OutboundMessage.objects.get(event_type="review.decided")
    assert (message.subscription, message.url, message.signer) == (None, receiver.url, f"api_client:{api_client.pk}")
    assert request.headers["webhook-id"] == message.pk
    assert api_client.webhook_secret not in message.signer + str(message.payload)


def test_subscriptions_to_review_decided_hear_it_too_with_their_own_secret(client, receiver, manager, on_commit):
    subscription = Subscription.objects.create(name="crm", url=receiver.url, events=["review.decided"])
    _, token = make_api_client()
    with on_commit():
        body = ask(client, token, receiver, callback_url=None)
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="reject", reason="No")
    [request] = decided(receiver)
    Webhook(subscription.secret).verify(request.body, request.headers)
    assert request.json["data"]["decision"]["reason"] == "No"


def test_a_relay_run_again_sends_nothing_twice(client, receiver, manager, on_commit):
    from reviewconsole.api.review_events import review_consume
    from reviewconsole.workflow_sessions.domain_events import from_row
    from reviewconsole.workflow_sessions.models import OutboxEvent

    Subscription.objects.create(name="crm", url=receiver.url, events=["review.decided"])
    _, token = make_api_client()
    with on_commit():
        body = ask(client, token, receiver)
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
    row = OutboxEvent.objects.get(kind="interrupt.answered", session_id=body["session_id"])
    with on_commit():
        review_consume(from_row(row.kind, row.data), row.pk)  # the row relayed again after a crash
    assert OutboundMessage.objects.filter(event_type="review.decided").count() == 2  # callback + subscription
    assert len(decided(receiver)) == 2
    assert len({r.headers["webhook-id"] for r in decided(receiver)}) == 2


def test_a_failed_callback_is_retried_with_the_same_webhook_id(client, manager, on_commit):
    from tests.outbound.receiver import Receiver

    failing = Receiver(statuses=[503]).start()
    try:
        _, token = make_api_client()
        with on_commit():
            body = ask(client, token, failing)
        with on_commit():
            interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
        message = OutboundMessage.objects.get(event_type="review.decided")
        assert (message.status, message.attempts, message.next_attempt_at is not None) == ("pending", 1, True)
        from reviewconsole.outbound.services import message_deliver

        assert message_deliver(message_id=message.pk) == "delivered"  # the retry the back-off schedules
        assert [r.headers["webhook-id"] for r in failing.received] == [message.pk, message.pk]
    finally:
        failing.stop()


def test_a_revoked_clients_callback_is_not_sent(client, receiver, manager, on_commit):
    api_client, token = make_api_client()
    with on_commit():
        body = ask(client, token, receiver)
    ApiClient.objects.filter(pk=api_client.pk).update(revoked_at=timezone.now())
    with on_commit():
        interrupt_decide(interrupt=item_of(body), user=manager, action="approve")
    assert decided(receiver) == []
    message = OutboundMessage.objects.get(event_type="review.decided")
    assert "no signing secret" in message.last_error


@pytest.mark.django_db(transaction=True)
def test_reviewers_racing_deliver_one_decision_per_target(client, demo_tx, receiver):
    Subscription.objects.create(name="crm", url=receiver.url, events=["review.decided"])
    _, token = make_api_client()
    body = ask(client, token, receiver)
    item = item_of(body)
    finance = Group.objects.get(name="queue:finance")
    reviewers = []
    for n in range(4):
        user = User.objects.create_user(f"racer{n}", password="x")
        user.groups.add(finance)
        reviewers.append(user)
    barrier = threading.Barrier(len(reviewers))
    results: list[object] = [None] * len(reviewers)

    def decide(n, user):
        try:
            barrier.wait(timeout=DEADLINE)
            results[n] = interrupt_decide(
                interrupt=Item.objects.select_related("session", "queue").get(pk=item.pk),
                user=user,
                action="approve" if n % 2 else "reject",
                reason="No",
            )
        except BaseException as exc:
            results[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(n, u)) for n, u in enumerate(reviewers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), "a decision did not finish in time"
    won = [r for r in results if isinstance(r, Item)]
    assert len(won) == 1, results
    assert all(isinstance(r, AlreadyDecidedError) for r in results if r not in won), results
    relay(session_id=body["session_id"])  # whatever a lost race left for the sweep
    messages = OutboundMessage.objects.filter(event_type="review.decided")
    assert messages.count() == 2  # one for the callback, one for the subscription
    assert len({r.headers["webhook-id"] for r in decided(receiver)}) == 2
    decisions = {r.json["data"]["decision"]["by"] for r in decided(receiver)}
    assert decisions == {won[0].decided_by_label}


@pytest.mark.parametrize("whole_session", [False, True])
def test_a_manager_cancelling_in_the_inbox_is_heard_at_the_callback(
    client, receiver, manager, on_commit, whole_session
):
    # A callback-only agent never heard of a whole session cancelled (and heard "decided" of a request).
    from reviewconsole.inbox.items.lifecycle import Actor, interrupt_cancel

    _, token = make_api_client()
    with on_commit():
        body = ask(client, token, receiver)
    with on_commit():
        interrupt_cancel(
            interrupt=item_of(body), actor=Actor.person(manager), reason="Duplicate", whole_session=whole_session
        )
    [request] = decided(receiver)
    data = request.json["data"]
    assert (data["id"], data["status"], data["decision"]) == (body["id"], "cancelled", None)
    assert (data["cancelled"]["by"], data["cancelled"]["reason"]) == ("manager", "Duplicate")


def test_what_the_client_itself_cancels_or_revises_sends_nothing(client, demo, receiver, on_commit):
    _, token = make_api_client()
    with on_commit():
        cancelled = ask(client, token, receiver)
        revised = ask(client, token, receiver)
        withdrawn = ask(client, token, receiver)
    request = f"/api/v1/sessions/{withdrawn['session_id']}/interrupts/{withdrawn['id']}/cancel"
    with on_commit():
        assert post(client, f"/api/v1/reviews/{cancelled['id']}/cancel", {}, token).status_code == 200
        ask(client, token, receiver, revision_of=revised["id"])
        assert post(client, request, {"reason": "Withdrawn"}, token).status_code == 200
    assert decided(receiver) == []
    assert not OutboundMessage.objects.filter(event_type="review.decided").exists()
