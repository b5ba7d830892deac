"""The client's pure parts: the review JSON to dataclasses, ``outcome``, retry delays, base URLs."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest
from reviewconsole_client import ApiError, ConflictError, Review, ServerError, outcome
from reviewconsole_client._protocol import MAX_BACKOFF, RetryPolicy, api_base, retryable, wait_param
from reviewconsole_client.errors import error_for

from reviewconsole.api.review_wait import wait_seconds

DECIDED = {
    "id": "rv_1",
    "status": "decided",
    "title": "t",
    "decision": {"action": "revise", "feedback": "shorter", "by": "ada", "at": "2026-12-01T00:00:00Z", "new": 1},
    "cancelled": None,
    "metadata": None,
    "added_later": {"x": 1},
}


def test_the_review_json_becomes_dataclasses_and_keeps_what_it_does_not_know():
    review = Review.from_json(DECIDED)
    assert review.done and review.metadata == {}
    assert review.decision.feedback == "shorter" and review.decision.extra == {"new": 1}
    assert review.extra == {"added_later": {"x": 1}}
    assert outcome(review)["status"] == "revise" and outcome(review)["feedback"] == "shorter"
    with pytest.raises(KeyError):
        Review.from_json({"id": "rv_2"})


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"status": "pending"}, {"status": "pending"}),
        ({"status": "cancelled", "cancelled": {"by": "client:x", "at": "t", "reason": "gone"}}, {"reason": "gone"}),
        ({"status": "expired", "decision": {"action": "timeout", "by": "system (expired)"}}, {"status": "expired"}),
        ({"status": "superseded", "superseded_by": "rv_9"}, {"superseded_by": "rv_9"}),
        ({"status": "decided", "decision": {"action": "answer", "answer": {"a": 1}}}, {"status": "answered"}),
    ],
)
def test_outcome_says_how_a_review_ended(data, expected):
    result = outcome(Review.from_json({"id": "rv_1", **data}))
    assert result["review_id"] == "rv_1"
    assert expected.items() <= result.items()


def _answer(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": {"code": "c", "message": "m", "by": "ada"}})


def test_retry_delays_follow_retry_after_else_back_off():
    policy = RetryPolicy(retries=5, backoff=0.5)
    assert [policy.delay(n, None) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, MAX_BACKOFF, MAX_BACKOFF]
    assert policy.delay(0, _answer(503, **{"Retry-After": "3"})) == 3.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= policy.delay(0, _answer(429, **{"Retry-After": later})) <= 30
    assert policy.delay(2, _answer(503, **{"Retry-After": "soon"})) == 2.0  # unreadable: back-off
    assert policy.delay(0, _answer(503, **{"Retry-After": "100000"})) == 120.0  # capped


def test_what_is_retried():
    assert retryable(_answer(503)) and retryable(_answer(500)) and retryable(_answer(429))
    assert retryable(_answer(409, **{"Retry-After": "1"}))  # busy
    assert not retryable(_answer(409)) and not retryable(_answer(400)) and not retryable(_answer(201))


def test_errors_carry_the_apis_error_json():
    error = error_for(409, {"error": {"code": "review_decided", "message": "Decided by ada", "by": "ada"}})
    assert isinstance(error, ConflictError)
    assert (error.status, error.code, error.message, error.details) == (
        409,
        "review_decided",
        "Decided by ada",
        {"by": "ada"},
    )
    assert isinstance(error_for(502, None), ServerError) and error_for(502, None).code == "http_502"
    assert type(error_for(418, {"error": "no"})) is ApiError


@pytest.mark.parametrize(
    "url", ["https://c.example", "https://c.example/", "https://c.example/api/v1", "https://c.example/api/v1/"]
)
def test_the_base_url_may_name_the_api_or_not(url):
    assert api_base(url) == "https://c.example/api/v1"


@pytest.mark.parametrize(("seconds", "sent"), [(30, "30.000"), (2.5, "2.500"), (1e-05, "0.000"), (60.0, "60.000")])
def test_a_wait_is_sent_as_digits_the_api_takes_never_an_exponent(seconds, sent):
    """``f"{wait:g}"`` sent ``1e-05``, which the API refuses (``wait_invalid``)."""
    assert wait_param(seconds) == sent
    assert wait_seconds(sent) == float(sent)
