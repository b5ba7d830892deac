"""Reviews on a served console (``manage.py serve``, Daphne, its worker threads, SQLite): the
long-poll woken by a reviewer's decision, ``kill -9`` right after the decision's 2xx, and a
console restarted between the ask and the decision. The reviewer decides through the inbox's
HTTP door (login form, CSRF), the agent asks and waits through the API with httpx."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from tests.console.embedded import EmbeddedConsole
from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for

TOKEN = "rc_served-reviews-token-0123456789abcdefghijklmnop"
PASSWORD = "served-reviewer-pass-1234"
WAIT = 50  # seconds a long-poll may be held here; a decision must end it long before
BACKOFF = 30.0  # outbound back-off: a delivery recovered sooner came from the task's recovery

SETUP = f"""
from django.contrib.auth import get_user_model
from reviewconsole.api.models import ApiClient
from reviewconsole.inbox.items.queues import queue_ensure
queue, _ = queue_ensure("finance")
user = get_user_model().objects.create_user("rita", password={PASSWORD!r})
user.groups.add(queue.group)
client = ApiClient(name="agent", workflows=["*"])
client.set_token({TOKEN!r})
client.save()
print(client.webhook_secret)
"""


class Reviewer:
    """A reviewer logged in through the login form, deciding through the inbox's JSON door."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
        self.http.get("/accounts/login/")
        response = self.http.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": self._csrf(), "username": "rita", "password": PASSWORD},
            headers={"Origin": url, "Referer": f"{url}/accounts/login/"},
        )
        assert response.status_code == 302, response.text[:500]

    def _csrf(self) -> str:
        return next(c.value for c in self.http.cookies.jar if c.name == "csrftoken") or ""

    def decide(self, inbox_url: str, **fields: str) -> httpx.Response:
        path = inbox_url.removeprefix(self.url) + "decide/"
        return self.http.post(
            path,
            data=fields,
            headers={
                "Accept": "application/json",
                "X-CSRFToken": self._csrf(),
                "Origin": self.url,
                "Referer": inbox_url,
            },
        )


def api(console: EmbeddedConsole) -> httpx.Client:
    return httpx.Client(base_url=f"{console.url}/api/v1", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=90)


def ask(console: EmbeddedConsole, **changes: Any) -> dict[str, Any]:
    body = {"title": "Refund A-1001", "message": "Approve a $250 refund?", "queue": "finance", **changes}
    with api(console) as http:
        response = http.post("/reviews", json=body, headers={"Idempotency-Key": "ask-1"})
    assert response.status_code == 201, response.text
    return response.json()


def read(console: EmbeddedConsole, review_id: str, wait: float = 0) -> dict[str, Any]:
    with api(console) as http:
        response = http.get(f"/reviews/{review_id}", params={"wait": wait})
    assert response.status_code == 200, response.text
    return response.json()


def asked(console: EmbeddedConsole, review_id: str) -> dict[str, Any]:
    """The review once its item is in the inbox (the session's run asks right after the 201)."""
    return wait_for(lambda: (r := read(console, review_id))["inbox_url"] and r, 60, "the review's item")


class LongPoll(threading.Thread):
    """``GET /reviews/{id}?wait=WAIT`` on a thread; ``result`` is its review JSON."""

    def __init__(self, console: EmbeddedConsole, review_id: str) -> None:
        super().__init__(daemon=True)
        self.console, self.review_id = console, review_id
        self.result: dict[str, Any] | None = None

    def run(self) -> None:
        self.result = read(self.console, self.review_id, wait=WAIT)


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def console(tmp_path):
    running = EmbeddedConsole(
        tmp_path, env={"REVIEWCONSOLE_OUTBOUND_BACKOFF": str(BACKOFF), "REVIEWCONSOLE_OUTBOUND_TIMEOUT": "120"}
    )
    yield running
    running.stop()


def test_a_long_poll_returns_when_a_reviewer_decides(console):
    console.start()
    console.shell(SETUP)
    review = asked(console, ask(console)["id"])
    assert read(console, review["id"], wait=0.2)["status"] == "pending"  # held, then still pending at N
    poll = LongPoll(console, review["id"])
    poll.start()
    response = Reviewer(console.url).decide(review["inbox_url"], action="reject", reason="Over budget")
    assert response.status_code == 200, response.text
    poll.join(WAIT - 10)  # woken by the decision, not by the end of its wait
    assert not poll.is_alive() and poll.result is not None
    assert poll.result["status"] == "decided"
    assert (poll.result["decision"]["action"], poll.result["decision"]["by"]) == ("reject", "rita")
    assert poll.result["decision"]["reason"] == "Over budget"


def test_kill_9_right_after_the_decisions_2xx_still_delivers_review_decided(console):
    receiver = Receiver(hold=1).start()  # the first POST is left unanswered: the kill lands during it
    try:
        console.start()
        secret = console.shell(SETUP).split()[-1]
        review = asked(console, ask(console, callback_url=receiver.url)["id"])
        response = Reviewer(console.url).decide(review["inbox_url"], action="approve")
        assert response.status_code == 200, response.text
        wait_for(lambda: receiver.received, 30, "the first attempt reaches the receiver")
        console.kill()  # after the 2xx, mid-delivery: the receiver has not answered
        [message] = console.sql("SELECT id, status FROM outbound_outboundmessage WHERE event_type = 'review.decided'")
        assert message["status"] == "pending"  # stored with the decision, not delivered yet

        console.start(migrate=False)
        delivered = wait_for(
            lambda: console.sql("SELECT id FROM outbound_outboundmessage WHERE status = 'delivered'"),
            BACKOFF,
            "review.decided delivered after the restart, within the back-off",
        )
        assert delivered == [{"id": message["id"]}]
        assert set(receiver.webhook_ids()) == {message["id"]}  # a receiver deduping on webhook-id: once
        last = receiver.received[-1]
        Webhook(secret).verify(last.body, last.headers)
        assert last.json["data"]["decision"]["action"] == "approve"
    finally:
        receiver.stop()


def test_a_long_poll_and_a_callback_survive_a_restart_between_ask_and_decision(console, receiver):
    console.start()
    secret = console.shell(SETUP).split()[-1]
    review = asked(console, ask(console, callback_url=receiver.url)["id"])
    console.kill()
    console.start(migrate=False)
    assert read(console, review["id"])["status"] == "pending"
    poll = LongPoll(console, review["id"])
    poll.start()
    response = Reviewer(console.url).decide(review["inbox_url"], action="approve")
    assert response.status_code == 200, response.text
    poll.join(WAIT - 10)
    assert not poll.is_alive() and poll.result is not None
    assert poll.result["status"] == "decided"
    wait_for(lambda: receiver.received, 30, "review.decided at the callback")
    wait_for(lambda: console.sql("SELECT id FROM outbound_outboundmessage WHERE status = 'delivered'"), 30, "delivered")
    [request] = receiver.received  # once
    Webhook(secret).verify(request.body, request.headers)
    assert request.json["data"]["id"] == review["id"]
    assert request.json["data"]["decision"]["by"] == "rita"
