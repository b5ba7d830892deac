"""A console restart between ``ask`` and the decision: ``wait`` rides it out and the decision
arrives once, to the long-poll and to the callback.

The console (``manage.py serve``, its own SQLite database) is killed as ``kill -9`` does while
the client long-polls, then started again on the same port; the manager decides after the
restart. The client's waiter sees connection errors meanwhile and retries them until its deadline.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from reviewconsole_client import Client, verify_webhook

from tests.clients.served import TOKEN, Reviewer, serve_console, webhook_secret
from tests.outbound.receiver import Receiver
from tests.scaleout.stack_parts import wait_for


@pytest.fixture
def console(tmp_path):
    running = serve_console(tmp_path)
    yield running
    running.stop()


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


def test_a_long_poll_and_a_callback_survive_kill_9_of_the_console(console, receiver):
    secret = webhook_secret(console)
    with Client(console.url, TOKEN, backoff=0.05) as client, ThreadPoolExecutor(1) as pool:
        review = client.ask(title="Refund?", message="m", queue="finance", callback_url=receiver.url)
        Reviewer(console.url).item_page(review.id)  # the item exists before the kill
        waiting = pool.submit(client.wait, review, timeout=180)
        console.kill()
        console.start(migrate=False)
        manager = Reviewer(console.url)
        try:
            assert manager.decide(review.id, "approve").status_code == 200
        finally:
            manager.close()
        decided = waiting.result()
        assert (decided.status, decided.decision.by) == ("decided", "manager")

        [delivery] = wait_for(lambda: receiver.received, 60, "the review.decided event")
        event = verify_webhook(delivery.headers, delivery.body, secret)
        assert event.review.decision == decided.decision
        assert client.get(review).decision == decided.decision  # decided once
