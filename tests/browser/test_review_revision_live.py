"""After feedback on a review asked through ``/api/v1/reviews``: its session ends with the feedback,
so the waiting page waits for the client's revision (a review in a session of its own, which
declares it replaces the first: ``metadata["supersedes_session"]``) and opens it as soon as the
client sends it, live over the inbox socket. Headless Chromium against a served console.

Every wait is on the page's state (a URL, an attribute), never on a fixed time.
"""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve
from tests.browser.test_main_job import WAIT_MS

pytestmark = pytest.mark.browser
browser = test_main_job.browser

TOKEN = "rc_review-revision-live-token-0123456789abcdefghij"
ASK = {"title": "Reply to A-1001", "message": "Is this reply right?", "queue": "support", "kind": "text"}


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(
        tmp_path_factory.mktemp("review-revision"), "review-revision-console.log", DEMO_API_TOKEN=TOKEN
    ) as server:
        yield server


def _ask(console, body):
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": uuid.uuid4().hex}
    response = httpx.post(f"{console.url}/api/v1/reviews", json=body, headers=headers, timeout=WAIT_MS / 1000)
    assert response.status_code == 201, response.text
    return response.json()


def test_after_feedback_on_a_review_the_page_opens_its_clients_revision(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    older = _ask(console, ASK)
    first = item_of(page, older["session_id"])
    page.goto(first["url"])
    page.fill("#feedback", "Ask for the order number")
    page.click("#revise")
    page.wait_for_url(f"**{first['url']}after-feedback/")
    state = page.locator("#next-state")
    expect(state).to_have_attribute("data-state", "waiting")  # not "ended": its session did end
    expect(state).to_contain_text("Waiting for the client to send the revised draft")
    # a function: a bare expression is run with eval() while polling, which the page's CSP refuses
    page.wait_for_function("() => document.documentElement.dataset.inboxLive === 'live'")

    newer = _ask(console, {**ASK, "message": "Is this reply right now?", "revision_of": older["id"]})

    page.wait_for_url(re.compile(rf"/inbox/items/(?!{first['id']}/)\d+/$"))  # opened by itself, live
    second = item_of(page, newer["session_id"])
    assert page.url.endswith(second["url"])
    context.close()
