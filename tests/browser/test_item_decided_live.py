"""An item page left open while someone else decides it (headless Chromium): the decision appears
in place (what was sent, by whom and when, said once; the claim and the decision controls leave),
and the session's status appears, then, without a reload, its result once it ended."""

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


def test_an_open_item_page_shows_the_decision_in_place_and_how_the_session_went_on(console, browser):
    from playwright.sync_api import expect

    session = webhook(console, "email-review", {"complaint": "Outcome: my <b>parcel</b> is lost"})
    watching_context, watching = open_page(browser, console, "reviewer")
    deciding_context, deciding = open_page(browser, console, "manager")
    item = item_of(deciding, session)
    watching.goto(item["url"])
    expect(watching.locator("html[data-inbox-live='live']")).to_have_count(1)
    expect(watching.locator("#owner")).to_have_text("nobody")
    expect(watching.locator("#session-outcome")).to_be_hidden()
    expect(watching.locator("#decision")).to_have_count(0)
    watching.click("#claim")
    expect(watching.locator(".claim")).to_contain_text("You hold this request")

    deciding.goto(item["url"])
    deciding.click("#take-over")  # a queue manager takes it over, then decides
    deciding.click("#approve")
    deciding.wait_for_url("**/inbox/")

    decision = watching.locator("#decision")
    expect(decision).to_be_visible()
    expect(decision.locator("#decision-title")).to_have_text("Approved")
    expect(decision.locator("#sent-text")).to_contain_text("my <b>parcel</b> is lost")  # escaped: shown as text
    assert decision.locator("b").count() == 0
    expect(decision.locator("#decision-by")).to_have_text("manager")
    expect(decision.locator("#decision-at time")).to_have_text(re.compile(r"just now|min ago"))
    expect(watching.locator("#status-banner")).to_have_text(
        "Decided while this page was open. This page is out of date: a decision now would be refused."
    )
    expect(watching.locator("#owner-line")).to_have_text("")  # who decided: once, in the decision
    expect(watching.locator(".claim")).to_be_hidden()  # no stale "You hold this request … Release"
    box = watching.evaluate("document.getElementById('item').getBoundingClientRect().top")
    order = watching.evaluate(
        "['decision', 'session-outcome'].map((id) => document.getElementById(id).getBoundingClientRect().top)"
    )
    assert box < order[0] < order[1], order  # the decision, then how the session went on
    expect(watching.locator("#session-outcome")).to_be_visible()
    # Asked when the decision arrived: its run may not have started yet, or may still be going.
    expect(watching.locator("#session-status")).to_have_text(re.compile(r"^(resuming|running|completed)$"))
    # The page keeps asking while the session goes on by itself, and shows how it ended.
    expect(watching.locator("#session-status")).to_have_text("completed", timeout=60_000)
    expect(watching.locator("#session-result")).to_have_text("Draft approved and sent successfully.")
    expect(watching.locator("#session-note")).to_have_text("")
    watching.reload()
    expect(watching.locator("#session-status")).to_have_text("completed")
    expect(watching.locator("#session-result")).to_have_text("Draft approved and sent successfully.")
    expect(watching.locator("#decision #decision-by")).to_have_text("manager")  # the page as served says the same
    expect(watching.locator("#status-banner")).to_be_hidden()
    watching_context.close()
    deciding_context.close()
