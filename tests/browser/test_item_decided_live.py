"""An item page left open while someone else decides it (headless Chromium): the owner line turns
into "decided by", and the session's status appears, then its result once it ended."""

from __future__ import annotations

import re

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("item-decided"), "item-decided-console.log") as server:
        yield server


def test_an_open_item_page_shows_who_decided_and_how_the_session_went_on(console, browser):
    from playwright.sync_api import expect

    session = webhook(console, "email-review", {"complaint": "Outcome: my <b>parcel</b> is lost"})
    watching_context, watching = open_page(browser, console, "reviewer")
    deciding_context, deciding = open_page(browser, console, "manager")
    item = item_of(deciding, session)
    watching.goto(item["url"])
    expect(watching.locator("html[data-inbox-live='live']")).to_have_count(1)
    expect(watching.locator("#owner")).to_have_text("nobody")
    expect(watching.locator("#session-outcome")).to_be_hidden()

    deciding.goto(item["url"])
    deciding.click("#approve")
    deciding.wait_for_url("**/inbox/")

    expect(watching.locator("#status-banner")).to_contain_text("approved by manager")
    expect(watching.locator("#owner-line")).to_have_text("· decided by manager")
    expect(watching.locator("#owner")).to_have_count(0)
    expect(watching.locator("#session-outcome")).to_be_visible()
    # Asked when the decision arrived: the run may still be going then.
    expect(watching.locator("#session-status")).to_have_text(re.compile(r"^(running|completed)$"))

    for _ in range(50):  # the session's own end shows on reload
        watching.reload()
        if watching.locator("#session-status").text_content() == "completed":
            break
    expect(watching.locator("#session-status")).to_have_text("completed")
    expect(watching.locator("#session-result")).to_have_text("Draft approved and sent successfully.")
    expect(watching.locator("#session-note")).to_have_text("")
    expect(watching.locator("#owner-line")).to_have_text("· decided by manager")
    watching_context.close()
    deciding_context.close()
