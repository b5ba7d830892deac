"""Inbox pages in headless Chromium: a generated form with a validation error, edit-before-
approve with its diff, the keyboard path, a phone-sized screen, and an item that expires while its
page is open (H17, H20). Screenshots go to ``test-artifacts/``.

VIP discounts are due 6 seconds after they are asked here (``REVIEWCONSOLE_EXPIRY``), and time out.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS, WAIT_MS

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too
DUE_SECONDS = 6
FIGURES: dict[str, float] = {}


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    expiry = json.dumps(
        {
            "vip-discount": {"due_in_seconds": DUE_SECONDS, "on_expiry": "timeout"},
            "incident-triage": {"due_in_seconds": 1},  # overdue at once, and stays (no expiry policy)
        }
    )
    with serve(
        tmp_path_factory.mktemp("inbox-pages"), "inbox-pages-console.log", REVIEWCONSOLE_EXPIRY=expiry
    ) as server:
        yield server
    if FIGURES:
        (ARTIFACTS / "inbox-expiry.json").write_text(json.dumps(FIGURES, indent=2) + "\n", encoding="utf-8")


def test_a_generated_form_shows_its_errors_and_then_resumes_the_workflow(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session = webhook(console, "incident-triage", {"title": "Checkout <b>down</b>", "details": "500 on /pay"})
    page.goto(item_of(page, session)["url"])
    expect(page.locator("#payload")).to_contain_text("Checkout <b>down</b>")  # shown as text, not markup
    page.select_option("#id-f-severity", label="high")
    page.fill("#id-f-summary", "Card payments fail at checkout")
    page.fill("#id-f-affected_customers", "-3")
    page.fill("#id-f-components-0", "checkout")
    page.click("#answer")
    expect(page.locator("#error")).to_have_text("Correct the highlighted fields; nothing was recorded.")
    expect(page.locator("#id-f-affected_customers-error")).to_have_text("-3 is less than the minimum of 0")
    expect(page.locator("#id-f-contact-name-error")).to_have_text("This field is required.")
    expect(page.locator("#id-f-summary")).to_have_value("Card payments fail at checkout")  # kept
    page.screenshot(path=ARTIFACTS / "inbox-form-errors.png", full_page=True)

    page.fill("#id-f-affected_customers", "120")
    page.fill("#id-f-contact-name", "Dana")
    page.click("#id-f-components .list-add")
    page.fill("#id-f-components-1", "payments")
    page.click("#answer")
    page.wait_for_url("**/inbox/")
    expect(page.locator(".messages")).to_contain_text("Triage sent: the workflow goes on with it.")
    context.close()


def test_edit_before_approve_shows_and_keeps_the_diff(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session = webhook(console, "email-review", {"complaint": "The blender stopped after a week"})
    item = item_of(page, session)
    page.goto(item["url"])
    expect(page.locator("#edit-diff")).to_have_text("none yet")
    page.click("#edit-box summary")
    draft = page.input_value("#edited-draft")
    edited = draft.replace("Hello,", "Dear Ms Rivera,").replace("Kind regards,", "Kind regards,\nSam from Support")
    page.fill("#edited-draft", edited)
    expect(page.locator("#edit-diff .diff-line.del").first).to_contain_text("Hello,")
    expect(page.locator("#edit-diff .diff-line.add").first).to_contain_text("Dear Ms Rivera,")
    expect(page.locator("#edit-diff .diff-line.add")).to_have_count(2)
    page.screenshot(path=ARTIFACTS / "inbox-edit-diff.png", full_page=True)
    page.click("#approve")
    page.wait_for_url("**/inbox/")
    page.goto(item["url"])
    expect(page.locator("#decision-title")).to_have_text("Approved")
    expect(page.locator("#decision-by")).to_have_text("manager")
    expect(page.locator("#stored-diff .diff-line.add").first).to_contain_text("Dear Ms Rivera,")
    page.goto(f"{item['url']}history/")
    expect(page.locator("#revision-1-edit .diff-line.add")).to_have_count(2)
    context.close()


def test_the_keyboard_path_feedback_then_reject(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session = webhook(console, "email-review", {"complaint": "Keyboard path: wrong size delivered"})
    item = item_of(page, session)
    page.goto("/inbox/")
    page.locator("body").press("?")
    expect(page.locator("#help")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()
    for _ in range(20):  # j until the new item's link has the focus
        page.keyboard.press("j")
        if page.evaluate(
            "document.activeElement.closest('tr') && document.activeElement.closest('tr').dataset.id"
        ) == str(item["id"]):
            break
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{item['url']}")
    page.keyboard.press("f")
    expect(page.locator("#feedback")).to_be_focused()
    page.keyboard.type("shorter")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(re.compile(rf"/inbox/items/(?!{item['id']}/)\d+/$"))  # opened after feedback
    second = item_of(page, session, excluding=item["id"])
    assert page.url.endswith(second["url"])  # the session's next draft
    expect(page.locator("#revision-diff .diff-line.add").first).to_be_visible()
    page.keyboard.press("r")
    expect(page.locator("#reason")).to_be_focused()
    page.keyboard.type("We will call the customer instead")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**/inbox/")
    expect(page.locator(".messages")).to_contain_text("Reply rejected: nothing is sent to the customer.")
    context.close()


def test_on_a_phone_the_inbox_and_an_item_fit_the_screen(console, browser):
    from playwright.sync_api import expect

    phone = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
    context, page = open_page(browser, console, "manager", **phone)
    webhook(console, "refund-approval", {"order_id": "A-1001", "amount": 240, "reason": "Arrived broken"})
    session = webhook(console, "email-review", {"complaint": "Phone check: the app logs me out"})
    item = item_of(page, session)
    page.goto("/inbox/")
    expect(page.locator(f"#items tr[data-id='{item['id']}']")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), "the list scrolls sideways"
    page.screenshot(path=ARTIFACTS / "inbox-phone.png", full_page=False)
    page.goto(item["url"])
    expect(page.locator("#approve")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), "the item scrolls sideways"
    box = page.locator("#approve").bounding_box()
    assert box["height"] >= 44 and box["width"] >= 44, box  # a thumb-sized target
    page.screenshot(path=ARTIFACTS / "inbox-item-phone.png", full_page=True)
    context.close()


OVERDUE = """async (session) => {
  const answer = await fetch("/inbox/items.json", { credentials: "same-origin" });
  return answer.ok && (await answer.json()).items.some((i) => i.session_id === session && i.overdue);
}"""


def test_desktop_screenshot_of_a_busy_inbox(console, browser):
    """The README's picture (``docs/inbox.png`` is a copy of ``test-artifacts/inbox-desktop.png``):
    the two panes, the overdue incident selected with ``j`` and shown beside the list."""
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", viewport={"width": 1280, "height": 800})
    overdue = webhook(console, "incident-triage", {"title": "Search results are empty for some customers"})
    refund = webhook(console, "refund-approval", {"order_id": "B-2207", "amount": 185.5, "reason": "Wrong colour"})
    last = webhook(console, "email-review", {"complaint": "My order arrived without the charger"})
    page.goto(item_of(page, refund)["url"])
    page.click("#claim")
    item_of(page, last)
    late = item_of(page, overdue)
    page.wait_for_function(OVERDUE, arg=overdue, polling=100)  # due 1 s after it was asked
    page.goto("/inbox/")
    expect(page.locator(f"#items tr.overdue[data-id='{late['id']}']")).to_have_count(1)
    # The order as the server wrote it (a live update may add a row on top once the page is open).
    served = re.findall(r'<tr data-id="(\d+)"[^>]*?( class="overdue")?>', page.request.get("/inbox/").text())
    assert served and served[0][1], "overdue items come first"
    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(rf"[?&]item={late['id']}\b"))
    expect(page.frame_locator("#pane-frame").locator("main h1")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "inbox-desktop.png", full_page=False)
    context.close()


def test_h17_h20_an_item_expires_while_its_page_is_open(console, browser, capsys):
    """H20: the page says it expired without a reload; the stale button gets a readable 409.
    H17: the expiry is recorded within about 2 seconds of the due time."""
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session = webhook(console, "vip-discount", {"customer_id": "c123"})
    item = item_of(page, session)
    page.goto(item["url"])
    expect(page.locator("#tier")).to_have_text("Verified VIP Member")
    due = dt.datetime.fromisoformat(item["due_at"]).timestamp() * 1000
    # Due DUE_SECONDS after it was asked: the guard is that and the usual wait.
    expect(page.locator("#status-banner")).to_contain_text("Expired", timeout=DUE_SECONDS * 1000 + WAIT_MS)
    expect(page.locator("#decision")).to_contain_text("the workflow went on with a timeout")
    shown_after = page.evaluate("window.__bannerAt") - due
    page.screenshot(path=ARTIFACTS / "inbox-expired.png", full_page=True)
    page.click("#approve")  # the stale button
    expect(page.locator("#conflict")).to_contain_text("This request expired at ")
    expect(page.locator("#conflict")).to_contain_text("nothing was recorded")
    FIGURES["due_to_expired_on_open_page_ms"] = shown_after
    with capsys.disabled():
        print(f"\nmeasured: an item due at T showed as expired on its open page at T + {shown_after:.0f} ms")
    assert shown_after < 2500
    context.close()
