"""The managers' dashboard in headless Chromium (issue 17): live without a reload (a webhook's
request, a decision and an item turning overdue change its figures), refused to a reviewer who
manages nothing, and readable at 1280×800 and 390×844, light and dark. Screenshots:
``test-artifacts/dashboard-<width>-<scheme>.png``."""

from __future__ import annotations

import json

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS

pytestmark = pytest.mark.browser
browser = test_main_job.browser

DUE_SECONDS = 6  # the VIP discount's due time here: it turns overdue while the page is open


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    expiry = json.dumps({"vip-discount": {"due_in_seconds": DUE_SECONDS, "on_expiry": ""}})
    with serve(tmp_path_factory.mktemp("dashboard"), "dashboard-console.log", REVIEWCONSOLE_EXPIRY=expiry) as server:
        yield server


def _figure(page, queue: str, workflow: str, name: str):
    return page.locator(f"tr[data-queue='{queue}'][data-workflow='{workflow}'] [data-figure='{name}']")


def test_the_dashboard_follows_the_queues_live(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", viewport={"width": 1280, "height": 800})
    page.click("nav[aria-label='Main'] >> text=Dashboard")
    page.wait_for_url("**/dashboard/")
    expect(page.locator("html[data-inbox-live='live']")).to_have_count(1)
    expect(page.locator("#dashboard-empty")).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    session = webhook(console, "email-review", {"complaint": "Dashboard: my parcel is late"})
    expect(_figure(page, "support", "email-review", "waiting")).to_have_text("1")
    expect(_figure(page, "support", "email-review", "decided")).to_have_text("0")

    other_context, other = open_page(browser, console, "manager")
    other.goto(item_of(other, session)["url"])
    other.click("#approve")
    other.wait_for_url("**/inbox/")
    other_context.close()
    expect(_figure(page, "support", "email-review", "waiting")).to_have_text("0")
    expect(_figure(page, "support", "email-review", "decided")).to_have_text("1")
    expect(_figure(page, "support", "email-review", "deciders")).to_have_text("1 / 0 / 0")
    expect(page.locator("svg.day-chart rect.bar.people")).to_have_count(1)

    webhook(console, "vip-discount", {"customer_id": "c123"})
    expect(_figure(page, "sales", "vip-discount", "waiting")).to_have_text("1")
    expect(_figure(page, "sales", "vip-discount", "overdue")).to_have_text("0")
    # Due in a few seconds: the page asks again when it is due, with no change in the queue.
    expect(_figure(page, "sales", "vip-discount", "overdue")).to_have_text("1", timeout=(DUE_SECONDS + 10) * 1000)
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded"

    for width, height in ((1280, 800), (390, 844)):
        for scheme in ("light", "dark"):
            page.set_viewport_size({"width": width, "height": height})
            page.emulate_media(color_scheme=scheme)
            page.screenshot(path=ARTIFACTS / f"dashboard-{width}-{scheme}.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page scrolls sideways on a phone"
    context.close()


def test_a_reviewer_who_manages_nothing_has_no_dashboard(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "reviewer")
    expect(page.locator("nav[aria-label='Main']")).not_to_contain_text("Dashboard")
    response = page.goto("/dashboard/")
    assert response.status == 403
    context.close()
