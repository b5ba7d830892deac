"""reviewconsole_client.Client against a served console (``manage.py serve``), over real HTTP.

A manager decides in the inbox through its decide view, as a browser would; the client files,
reads, long-polls and cancels through ``/api/v1/reviews``. Nothing is mocked: the faults of the
retry tests come from a loopback proxy (``proxy.py``) that loses the console's real answers.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from reviewconsole_client import (
    AuthenticationError,
    BadRequestError,
    Client,
    ConflictError,
    NotFoundError,
    Review,
    ReviewTimeoutError,
    outcome,
)

from tests.clients.proxy import FaultyProxy
from tests.clients.served import TOKEN

SCHEMA = {
    "type": "object",
    "properties": {"severity": {"type": "string", "enum": ["low", "high"]}, "owner": {"type": "string"}},
    "required": ["severity"],
}


def ask_refund(client: Client, **extra) -> Review:
    return client.ask(
        title="Refund $250 for order A-1001?",
        message="The customer says it arrived broken.",
        queue="finance",
        payload={"order_id": "A-1001", "amount": 250},
        metadata={"ticket": "T-1"},
        **extra,
    )


def test_ask_files_a_review_that_a_manager_approves_while_wait_long_polls(client, manager):
    review = ask_refund(client)
    assert review.status == "pending" and not review.done
    assert (review.title, review.queue, review.kind) == ("Refund $250 for order A-1001?", "finance", "confirm")
    assert review.payload == {"order_id": "A-1001", "amount": 250}
    assert review.metadata == {"ticket": "T-1"}
    assert review.url.endswith(f"/api/v1/reviews/{review.id}")
    assert manager.item_page(review.id).endswith("/")  # the item, once the review's run asked
    assert client.get(review.id).status == "pending"

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.wait, review, timeout=120)
        assert manager.decide(review.id, "approve").status_code == 200
        decided = waiting.result()

    assert decided.status == "decided" and decided.done
    assert decided.decision is not None
    assert (decided.decision.action, decided.decision.by) == ("approve", "manager")
    assert outcome(decided)["status"] == "approved"
    assert client.get(review).decision == decided.decision  # the decision stays as it was


def test_a_rejection_carries_its_reason(client, manager):
    review = ask_refund(client)
    assert manager.decide(review.id, "reject", reason="No proof of damage").status_code == 200
    decided = client.wait(review, timeout=60)
    assert (decided.decision.action, decided.decision.reason) == ("reject", "No proof of damage")
    assert outcome(decided) | {"at": None} == {
        "review_id": review.id,
        "status": "rejected",
        "answer": decided.decision.answer,
        "reason": "No proof of damage",
        "feedback": decided.decision.feedback,
        "by": "manager",
        "at": None,
    }


def test_a_form_review_returns_the_answer_the_schema_validated(client, manager):
    review = client.ask(title="Triage", message="Checkout down", queue="operations", response_schema=SCHEMA)
    assert (review.kind, review.response_schema) == ("form", SCHEMA)
    # The form's select posts its options as JSON text, as a browser does.
    refused = manager.decide(review.id, "answer", **{"f.severity": '"urgent"'})
    assert refused.status_code == 400  # not in the enum: nothing stored
    assert client.get(review).status == "pending"
    assert manager.decide(review.id, "answer", **{"f.severity": '"high"', "f.owner": "ada"}).status_code == 200
    decided = client.wait(review, timeout=60)
    assert decided.decision.action == "answer"
    assert decided.decision.answer == {"severity": "high", "owner": "ada"}
    assert outcome(decided)["status"] == "answered"


def test_wait_raises_a_timeout_error_carrying_the_pending_review(client):
    review = ask_refund(client)
    with pytest.raises(ReviewTimeoutError) as raised:
        client.wait(review.id, timeout=0.2)
    assert isinstance(raised.value, TimeoutError)
    assert raised.value.review.id == review.id and raised.value.review.status == "pending"


def test_cancel_then_a_second_cancel_and_a_decision_are_refused(client, manager):
    review = ask_refund(client)
    manager.item_page(review.id)  # the item is in the inbox, for the refused decision below
    cancelled = client.cancel(review, reason="The customer withdrew")
    assert cancelled.status == "cancelled" and cancelled.done
    assert cancelled.cancelled.reason == "The customer withdrew"
    assert cancelled.cancelled.by and cancelled.cancelled.at
    assert client.wait(review, timeout=60).status == "cancelled"
    with pytest.raises(ConflictError) as again:
        client.cancel(review)
    assert again.value.status == 409 and again.value.code == "review_cancelled"
    assert again.value.details.get("at")
    assert manager.decide(review.id, "approve").status_code == 409
    assert client.get(review).decision is None


def test_cancelling_a_decided_review_is_a_conflict_naming_who_decided(client, manager):
    review = ask_refund(client)
    manager.decide(review.id, "approve")
    client.wait(review, timeout=60)
    with pytest.raises(ConflictError) as refused:
        client.cancel(review)
    assert refused.value.code == "review_decided"
    assert refused.value.details.get("by") == "manager"


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"queue": "no-such-queue"}, "queue_unknown"),
        ({"response_schema": {"type": "not-a-type"}}, "schema_invalid"),
        ({"title": ""}, "invalid_request"),
    ],
)
def test_bad_input_is_a_typed_error_with_the_apis_code(client, change, code):
    arguments = {"title": "Refund?", "message": "…", "queue": "finance", **change}
    with pytest.raises(BadRequestError) as refused:
        client.ask(**arguments)
    assert (refused.value.status, refused.value.code) == (400, code)
    assert refused.value.message


def test_an_unknown_review_and_a_wrong_token_are_typed_errors(console, client):
    with pytest.raises(NotFoundError) as unknown:
        client.get("rv_does-not-exist")
    assert unknown.value.code == "review_unknown"
    with Client(console.url, "rc_not-a-token", retries=0) as stranger, pytest.raises(AuthenticationError):
        stranger.ask(title="t", message="m", queue="finance")


def test_a_lost_answer_is_retried_with_the_same_idempotency_key_and_files_one_review(console):
    proxy = FaultyProxy(console.url, faults=["503", "drop"]).start()
    try:
        with Client(proxy.url, TOKEN, backoff=0.01) as flaky:
            review = flaky.ask(title="Refund?", message="m", queue="finance")
    finally:
        proxy.stop()
    first, second, third = proxy.seen
    assert [s.fault for s in proxy.seen] == ["503", "drop", None]
    assert first.console_status == 201  # the console filed it; the client never heard
    assert first.idempotency_key and first.idempotency_key == second.idempotency_key == third.idempotency_key
    assert (second.replayed, third.replayed) == (True, True)  # the same answer, nothing filed again
    assert f'"{review.id}"'.encode() in first.body


def test_each_ask_gets_its_own_key_unless_one_is_given(console, client):
    proxy = FaultyProxy(console.url).start()
    try:
        with Client(proxy.url, TOKEN) as api:
            one = api.ask(title="a", message="m", queue="finance")
            two = api.ask(title="a", message="m", queue="finance")
            again = api.ask(title="a", message="m", queue="finance", idempotency_key="ticket-7")
            same = api.ask(title="a", message="m", queue="finance", idempotency_key="ticket-7")
    finally:
        proxy.stop()
    assert one.id != two.id
    assert again.id == same.id
    keys = [s.idempotency_key for s in proxy.seen]
    assert keys[0] != keys[1] and keys[2:] == ["ticket-7", "ticket-7"]
    with pytest.raises(BadRequestError) as reused:  # the same key with another body
        client.ask(title="b", message="m", queue="finance", idempotency_key="ticket-7")
    assert reused.value.status == 422
