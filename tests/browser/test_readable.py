"""Readable everywhere (issue 17), in headless Chromium at 1280×800 and 390×844, light and dark:
titles and summaries written for people in the list and on the item page, human confirmations,
a page closed elsewhere that no longer offers its claim, a decided item that shows its decision
first, and the picture of a finished refund marking every step that ran. Screenshots go to
``test-artifacts/readable-*.png``.

Every wait is on the page's state (a text, a URL, an attribute), never on a fixed time.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too

DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
LOOKS = (("desktop", DESKTOP), ("phone", PHONE))
SCHEMES = ("light", "dark")
REFUND_TITLE = "Refund $250.00 for order A-1001 — Arrived broken"


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("readable"), "readable-console.log") as server:
        yield server


def _shot(page, name):
    page.screenshot(path=ARTIFACTS / f"readable-{name}.png", full_page=False)


def test_rows_and_item_pages_are_titled_for_people(console, browser):
    from playwright.sync_api import expect

    vip = webhook(console, "vip-discount", {"customer_id": "c123"})
    refund = webhook(console, "refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    for look, size in LOOKS:
        for scheme in SCHEMES:
            context, page = open_page(browser, console, "manager", color_scheme=scheme, **size)
            item_of(page, vip)
            asked = item_of(page, refund)
            page.goto("/inbox/")
            vip_row = page.locator("#items tr[data-id]", has_text="VIP discount 20% for Ada Lovelace")
            expect(vip_row.locator(".snippet")).to_have_text(
                "Tier: Verified VIP Member. Confirm the VIP discount or decline it."
            )
            refund_row = page.locator("#items tr[data-id]", has_text=REFUND_TITLE)
            expect(refund_row.locator(".snippet")).to_have_text(
                "Over the $100.00 policy limit: a person must approve it."
            )
            listed = page.locator("#items").inner_text()
            assert "c123" not in listed and "ask_for_approval:" not in listed and "'" not in listed
            _shot(page, f"inbox-{look}-{scheme}")
            page.goto(asked["url"])
            expect(page.locator("#item-title")).to_have_text(REFUND_TITLE)
            expect(page.locator("#workflow-title")).to_have_text("Refund approval")
            _shot(page, f"item-{look}-{scheme}")
            context.close()


def test_confirmations_say_what_happened(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    vip = item_of(page, webhook(console, "vip-discount", {"customer_id": "c123"}))
    page.goto(vip["url"])
    page.click("#reject")  # choosing Reject asks for the reason
    page.fill("#reason", "Not a VIP order")
    page.click("#reject")
    expect(page.locator(".messages")).to_contain_text("VIP discount declined: 20% for Ada Lovelace.")
    _shot(page, "confirmation-desktop-light")  # here: the after-feedback page below navigates on its own
    email = item_of(page, webhook(console, "email-review", {"complaint": "Readable: the lid is cracked"}))
    page.goto(email["url"])
    page.fill("#feedback", "Shorter, please")
    # The page as served: without its script, which opens the new draft as soon as it is ready
    # (the live DOM would then be the next request's, and the response's body gone).
    page.route(lambda url: url.endswith("/after_feedback.js"), lambda route: route.abort())
    page.click("#revise")
    page.wait_for_url("**/after-feedback/**")
    expect(page.locator("main")).to_contain_text("Feedback sent: a new draft is being written")
    served = page.content()
    assert "Decision recorded" not in served
    context.close()


def test_a_page_decided_elsewhere_drops_its_claim_and_says_who(console, browser):
    from playwright.sync_api import expect

    holding_context, holding = open_page(browser, console, "reviewer", **DESKTOP)
    deciding_context, deciding = open_page(browser, console, "manager", color_scheme="dark", **PHONE)
    email = item_of(holding, webhook(console, "email-review", {"complaint": "Readable: stale page"}))
    holding.goto(email["url"])
    holding.click("#claim")
    expect(holding.locator(".claim")).to_contain_text("You hold this request")
    expect(holding.locator("html[data-inbox-live='live']")).to_have_count(1)
    deciding.goto(email["url"])
    deciding.click("#take-over")  # a queue manager takes it over, then decides
    expect(deciding.locator(".claim")).to_contain_text("You hold this request")
    deciding.click("#approve")
    deciding.wait_for_url("**/inbox/**")
    expect(holding.locator("#decision #decision-by")).to_have_text("manager")
    expect(holding.locator("#status-banner")).to_contain_text("Decided while this page was open.")
    expect(holding.locator(".claim")).to_be_hidden()
    expect(holding.locator("#unclaim")).to_be_hidden()
    _shot(holding, "stale-desktop-light")
    holding_context.close()
    deciding_context.close()


def test_a_decided_triage_shows_its_answer_first(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    triage = item_of(page, webhook(console, "incident-triage", {"title": "Readable: checkout down"}))
    page.goto(triage["url"])
    page.select_option("#id-f-severity", label="high")
    page.fill("#id-f-summary", "Card payments fail at checkout")
    page.fill("#id-f-affected_customers", "1200")
    page.fill("#id-f-components-0", "checkout")
    page.fill("#id-f-contact-name", "Dana")
    page.click("#answer")
    expect(page.locator(".messages")).to_contain_text("Triage sent: the workflow goes on with it.")
    context.close()
    for look, size in LOOKS:
        for scheme in SCHEMES:
            context, page = open_page(browser, console, "manager", color_scheme=scheme, **size)
            page.goto(triage["url"])
            decision = page.locator("#decision")
            expect(decision).to_be_visible()
            expect(decision.locator("#decision-by")).to_have_text("manager")
            # Relative, with the absolute time and its zone on hover, as the rest of the console.
            expect(decision.locator("#decision-at time")).to_have_text(re.compile(r"just now|min ago"))
            expect(decision.locator("#decision-at time")).to_have_attribute("title", re.compile(r"\d{2}:\d{2}"))
            fields = decision.locator("#decision-fields")
            expect(fields).to_contain_text("Severity")
            expect(fields).to_contain_text("high")
            expect(fields).to_contain_text("1,200")
            expect(fields).to_contain_text("Contact: Name")
            top = page.evaluate("document.getElementById('decision').getBoundingClientRect().top")
            assert top < size["viewport"]["height"], "the decision is on the first screen"
            _shot(page, f"decided-{look}-{scheme}")
            context.close()


def test_a_finished_refunds_picture_marks_every_step(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    session = webhook(console, "refund-approval", {"order_id": "A-2002", "amount": 250, "reason": "Arrived broken"})
    asked = item_of(page, session)
    page.goto(asked["url"])
    page.click("#approve")
    expect(page.locator(".messages")).to_contain_text("Refund approved: $250.00 for order A-2002")
    submit = item_of(page, session, excluding=asked["id"])
    page.goto(submit["url"])
    expect(page.locator("#item-title")).to_have_text("Submit refund $250.00 for order A-2002")
    page.click("#approve")
    expect(page.locator(".messages")).to_contain_text("Refund submitted: $250.00 for order A-2002.")
    page.goto(submit["url"])
    for _ in range(100):  # the run after the decision ends on the worker: reload until the page says so
        if page.locator("#path-end").count():
            break
        page.reload()
    expect(page.locator("#path-steps")).to_have_text("refund_agent → ask_for_approval → submit_refund")
    expect(page.locator(".picture")).to_contain_text("Path taken")
    _shot(page, "refund-picture-desktop-light")
    context.close()


def test_the_picture_is_drawn_dark_on_a_dark_page_and_redrawn_when_the_theme_changes(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", color_scheme="dark", **DESKTOP)
    session = webhook(console, "refund-approval", {"order_id": "A-3003", "amount": 250, "reason": "Arrived broken"})
    page.goto(item_of(page, session)["url"])
    picture = page.locator("#workflow-picture")
    expect(picture).to_have_attribute("data-picture-theme", "dark")
    expect(picture).to_have_class(re.compile(r"\bdrawn\b"))
    ground = picture.evaluate("pre => getComputedStyle(pre).backgroundColor")
    assert ground != "rgb(255, 255, 255)", "the picture's ground stays white on a dark page"
    _shot(page, "refund-picture-desktop-dark")
    page.click("#theme-toggle")
    expect(picture).to_have_attribute("data-picture-theme", "light")
    expect(picture).to_have_class(re.compile(r"\bdrawn\b"))
    assert picture.evaluate("pre => getComputedStyle(pre).backgroundColor") == "rgb(255, 255, 255)"
    page.click("#theme-toggle")  # back to dark, as this context's device is
    expect(picture).to_have_attribute("data-picture-theme", "dark")
    context.close()


def test_the_selection_says_beforehand_what_approve_selected_acts_on(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    email = item_of(page, webhook(console, "email-review", {"complaint": "Which rows does bulk approval take?"}))
    vip = item_of(page, webhook(console, "vip-discount", {"customer_id": "c123"}))
    page.goto("/inbox/")
    page.check(f"#items tr[data-id='{vip['id']}'] input[name=ids]")
    expect(page.locator("#selected-count")).to_have_text("1 selected")
    page.check(f"#items tr[data-id='{email['id']}'] input[name=ids]")
    expect(page.locator("#selected-count")).to_have_text(
        "2 selected (Approve selected acts on 1 of them: the others are approved on their own page)"
    )
    context.close()


def test_money_is_written_in_the_readers_locale_also_when_pushed_live(console, browser):
    from playwright.sync_api import expect

    nbsp = "\u00a0"
    context, page = open_page(browser, console, "manager", locale="de-DE", **PHONE)  # Accept-Language: de-DE
    first = webhook(console, "refund-approval", {"order_id": "DE-1", "amount": 1250.5, "reason": "Kaputt"})
    page.goto(item_of(page, first)["url"])
    expect(page.locator("#item-title")).to_have_text(f"Refund 1.250,50{nbsp}$ for order DE-1 — Kaputt")
    page.goto("/inbox/")
    expect(page.locator("#live-status")).to_have_text("live")
    webhook(console, "refund-approval", {"order_id": "DE-2", "amount": 2500, "reason": "Late"})
    expect(page.locator("#items")).to_contain_text(f"Refund 2.500,00{nbsp}$ for order DE-2")  # pushed live
    _shot(page, "locale-de-DE-phone-light")
    context.close()
