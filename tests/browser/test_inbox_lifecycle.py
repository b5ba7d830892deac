"""The review lifecycle in a real browser: a reviewer defers, then escalates, an item from its page,
while a manager has the same item open and sees both live (issue 15)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("inbox-lifecycle"), "inbox-lifecycle-console.log") as server:
        yield server


def test_defer_then_escalate_from_the_item_page(console, browser):
    from playwright.sync_api import expect

    session = webhook(console, "email-review", {"complaint": "My battery dies after an hour"})
    manager_context, manager = open_page(browser, console, "manager")
    item = item_of(manager, session)
    manager.goto(item["url"])
    reviewer_context, reviewer = open_page(browser, console, "reviewer")
    reviewer.goto(item["url"])

    # Defer: a note (hostile text shown as text) and a new due time two hours ahead.
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    reviewer.click("#defer-box summary")
    reviewer.fill("#defer-due", due)
    reviewer.fill("#defer-note", "Waiting for the order number <script>alert(1)</script>")
    reviewer.click("#defer")
    expect(reviewer.locator(".messages")).to_contain_text(f"Deferred until {due.replace('T', ' ')}:00 UTC.")
    expect(reviewer.locator("#comment-list .comment[data-kind=defer] .comment-text")).to_have_text(
        "Waiting for the order number <script>alert(1)</script>"
    )
    expect(reviewer.locator("#deferred")).to_be_visible()
    # The manager's open page heard of it (the queue's live push), without a reload.
    expect(manager.locator("#status-banner")).to_contain_text("Deferred until")

    # Escalate to a queue the workflow allows; the reviewer does not review it, so lands on the inbox.
    reviewer.click("#escalate-box summary")
    expect(reviewer.locator("#escalate-to option")).to_have_text(["Support Leads", "Triage"])
    reviewer.select_option("#escalate-to", "support-leads")
    reviewer.fill("#escalate-note", "A refund over the limit: needs a lead")
    reviewer.click("#escalate")
    reviewer.wait_for_url("**/inbox/")
    expect(reviewer.locator(".messages")).to_contain_text("Escalated to Support Leads.")
    expect(reviewer.locator(f"#items tr[data-id='{item['id']}']")).to_have_count(0)
    # The manager's page says it is out of date (the item left the queue it showed).
    expect(manager.locator("#status-banner")).to_contain_text("out of date")
    manager.reload()
    expect(manager.locator("#queue-name")).to_have_text("Support Leads")
    expect(manager.locator("#comment-list .comment")).to_have_count(2)
    expect(manager.locator("#comment-list .comment[data-kind=escalate]")).to_contain_text("needs a lead")
    manager.screenshot(path=ARTIFACTS / "inbox-lifecycle.png", full_page=True)
    reviewer_context.close()
    manager_context.close()
