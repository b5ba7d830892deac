"""The async client, and ``verify_webhook`` on the signed ``review.decided`` a callback receives.

The callback goes to a real HTTP receiver on loopback (``tests/outbound/receiver.py``; the served
console allows private addresses); the secret is the API client's own, read from its database.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from reviewconsole_client import ConflictError, NotFoundError, WebhookVerificationError, verify_webhook

from tests.clients.served import webhook_secret
from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def secret(console):
    return webhook_secret(console)


async def test_the_async_client_asks_waits_and_cancels(aclient, manager):
    review = await aclient.ask(title="Ship the replacement?", message="Order C-9", queue="finance", kind="confirm")
    waiting = asyncio.create_task(aclient.wait(review, timeout=120))
    assert (await asyncio.to_thread(manager.decide, review.id, "approve")).status_code == 200
    decided = await waiting
    assert (decided.status, decided.decision.action, decided.decision.by) == ("decided", "approve", "manager")

    other = await aclient.ask(title="Ship another?", message="Order C-10", queue="finance")
    assert (await aclient.cancel(other.id, reason="duplicate")).status == "cancelled"
    with pytest.raises(ConflictError):
        await aclient.cancel(other.id)
    with pytest.raises(NotFoundError):
        await aclient.get("rv_nobody")


def test_the_decision_reaches_the_callback_signed_and_verify_webhook_reads_it(client, manager, receiver, secret):
    review = client.ask(title="Refund?", message="m", queue="finance", callback_url=receiver.url, metadata={"n": 1})
    assert manager.decide(review.id, "reject", reason="duplicate order").status_code == 200
    [delivery] = wait_for(lambda: receiver.received, 60, "the review.decided event at the callback")

    event = verify_webhook(delivery.headers, delivery.body, secret)
    assert event.type == "review.decided"
    assert event.id == delivery.headers["webhook-id"]
    assert event.review is not None and event.review.id == review.id
    assert (event.review.decision.action, event.review.decision.reason) == ("reject", "duplicate order")
    assert event.review.metadata == {"n": 1}
    assert event.review == client.get(review)  # the event's review is the API's

    tampered = json.loads(delivery.body)
    tampered["data"]["decision"]["action"] = "approve"
    with pytest.raises(WebhookVerificationError):
        verify_webhook(delivery.headers, json.dumps(tampered), secret)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(delivery.headers, delivery.body, "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY")
    with pytest.raises(WebhookVerificationError):
        verify_webhook({k: v for k, v in delivery.headers.items() if k != "webhook-signature"}, delivery.body, secret)
