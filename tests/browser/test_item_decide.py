"""An item's decision in headless Chromium, at 1280×800 and 390×844, light and dark: the decision
bar (sticky at the top of the item on wide screens, at the bottom of the screen on phones, the
reason asked for only once Reject is chosen, the form still whole without JavaScript), and after
feedback the page that waits for the new draft and opens it.
Screenshots go to ``test-artifacts/``.

Every wait is on the page's state (a URL, a visible element, a focused field), never on a fixed time.
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
SEEN = "sessionStorage.setItem('seen', (sessionStorage.getItem('seen') || '') + location.pathname + ' ')"
LONG_COMPLAINT = "Decision bar: the parcel arrived late and damaged.\n" + "More detail about the order.\n" * 60


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("item-decide"), "item-decide-console.log") as server:
        yield server


def _shot(page, name):
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=False)


def _in_view(page, selector):
    """Whether the element lies wholly inside the viewport: [top, bottom, viewport height]."""
    return page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return [Math.round(r.top), Math.round(r.bottom), window.innerHeight]; }",
        selector,
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_approve_is_in_reach_without_scrolling(console, browser, scheme):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", color_scheme=scheme, **PHONE)
    expect(page.locator("button.keys-help")).to_be_hidden()  # no keyboard-shortcuts link on a phone
    item = item_of(page, webhook(console, "email-review", {"complaint": LONG_COMPLAINT}))
    page.goto(item["url"])
    expect(page.locator("#approve")).to_be_in_viewport(ratio=1)
    top, bottom, height = _in_view(page, "#decision-bar")
    assert bottom <= height and top > height / 2, (top, bottom, height)  # at the bottom of the screen
    expect(page.locator("[data-help-open]")).to_be_hidden()
    expect(page.locator("#reason")).to_be_hidden()  # asked for only when rejecting
    _shot(page, f"decision-bar-phone-{scheme}")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_function("() => window.scrollY > 0")
    expect(page.locator("#approve")).to_be_in_viewport(ratio=1)  # still there at the end of the page
    # The page's last content is not hidden behind the bar.
    last, bar = page.evaluate(
        "() => [document.querySelector('main').lastElementChild.getBoundingClientRect().bottom,"
        " document.getElementById('decision-bar').getBoundingClientRect().top]"
    )
    assert last <= bar + 1, (last, bar)

    page.click("#reject")  # choosing Reject asks for the reason, in the bar
    expect(page.locator("#reason")).to_be_focused()
    expect(page.locator("#reason")).to_be_in_viewport()
    _shot(page, f"decision-bar-phone-reject-{scheme}")
    page.click("#reject")  # still empty: refused on the page, nothing sent
    expect(page.locator("#reason-needed")).to_be_visible()
    assert page.url.endswith(item["url"])
    page.fill("#reason", "Not this week")
    page.click("#reject")
    page.wait_for_url("**/inbox/")
    context.close()


def test_on_a_wide_screen_the_bar_stays_at_the_top_of_the_item(console, browser):
    from playwright.sync_api import expect

    for scheme in ("light", "dark"):
        context, page = open_page(browser, console, "manager", color_scheme=scheme, **DESKTOP)
        item = item_of(page, webhook(console, "email-review", {"complaint": LONG_COMPLAINT}))
        page.goto(item["url"])
        expect(page.locator("[data-help-open]")).to_be_visible()  # the shortcuts link on a wide screen
        top, _, height = _in_view(page, "#decision-bar")
        assert top < height / 2, (top, height)  # near the top of the item, above the draft
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_function("() => window.scrollY > 400")
        top, _, _ = _in_view(page, "#decision-bar")
        assert 0 <= top <= 1, top  # stuck to the top while the page scrolls
        expect(page.locator("#approve")).to_be_in_viewport(ratio=1)
        expect(page.locator("#reason")).to_be_hidden()
        page.keyboard.press("r")  # the shortcut chooses Reject too
        expect(page.locator("#reason")).to_be_focused()
        _shot(page, f"decision-bar-desktop-{scheme}")
        page.keyboard.type("Sent to legal")
        page.keyboard.press("Enter")  # Enter in the reason rejects, never approves
        page.wait_for_url("**/inbox/")
        page.goto(item["url"])
        expect(page.locator("#decision-reason")).to_have_text("Sent to legal")
        expect(page.locator("#decision-title")).to_have_text("Rejected")
        context.close()


def test_without_javascript_the_reason_shows_and_the_server_still_requires_it(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    item = item_of(page, webhook(console, "email-review", {"complaint": "Decision bar without scripts"}))
    context.close()
    context, page = open_page(browser, console, "manager", java_script_enabled=False, **PHONE)
    page.goto(item["url"])
    expect(page.locator("#reason")).to_be_visible()
    page.click("#reject")
    expect(page.locator("#error")).to_contain_text("reason")
    page.fill("#reason", "No scripts, still a reason")
    page.click("#reject")
    page.wait_for_url("**/inbox/")
    context.close()


def test_feedback_with_approve_comes_back_with_the_feedback_focused_and_kept(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    item = item_of(page, webhook(console, "email-review", {"complaint": "Feedback and approve at once"}))
    page.goto(item["url"])
    page.fill("#feedback", "Mention the refund policy")
    page.click("#approve")  # feedback written, Approve pressed: which did the reviewer mean?
    expect(page.locator("#error")).to_contain_text("ambiguous")
    expect(page.locator("#feedback")).to_be_focused()
    expect(page.locator("#feedback")).to_have_value("Mention the refund policy")
    expect(page.locator("#feedback")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#feedback-error")).to_be_visible()
    expect(page.locator("#action-error")).to_be_visible()
    _shot(page, "decision-ambiguous")
    page.fill("#feedback", "")
    page.click("#approve")
    page.wait_for_url("**/inbox/")
    context.close()


@pytest.mark.parametrize(("size", "scheme"), [("desktop", "light"), ("phone", "dark")])
def test_after_feedback_the_page_waits_for_the_new_draft_and_opens_it(console, browser, size, scheme):
    from playwright.sync_api import expect

    viewport = DESKTOP if size == "desktop" else PHONE
    context, page = open_page(browser, console, "manager", color_scheme=scheme, **viewport)
    session = webhook(console, "email-review", {"complaint": f"After feedback ({size}): the lamp flickers"})
    first = item_of(page, session)
    page.goto(first["url"])
    # A second tab already on the waiting page, before any new draft exists: it waits, live.
    waiting = context.new_page()
    waiting.goto(f"{first['url']}after-feedback/")
    expect(waiting.locator("#next-state")).to_have_attribute("data-state", "waiting")
    # a function: a bare expression is run with eval() while polling, which the page's CSP refuses
    waiting.wait_for_function("() => document.documentElement.dataset.inboxLive === 'live'")
    _shot(waiting, f"after-feedback-waiting-{size}-{scheme}")
    # Notes every page the tab shows: the waiting page may open the new draft at once.
    context.add_init_script(SEEN)
    page.fill("#feedback", "shorter")
    page.click("#revise")
    page.wait_for_url(re.compile(rf"/inbox/items/(?!{first['id']}/)\d+/$"))  # opened by itself, live
    second = item_of(page, session, excluding=first["id"])
    assert page.url.endswith(second["url"])  # the session's new draft
    expect(page.locator("#last-feedback")).to_have_text("shorter")
    expect(page.locator("#draft")).not_to_contain_text("Revised after reviewer feedback")
    seen = page.evaluate("sessionStorage.getItem('seen')").split()
    assert seen[-2:] == [f"/inbox/items/{first['id']}/after-feedback/", second["url"]], seen
    _shot(page, f"after-feedback-next-draft-{size}-{scheme}")
    waiting.wait_for_url(f"**{second['url']}")  # the socket said the new draft was there
    context.close()


def test_after_feedback_without_javascript_the_page_links_the_next_draft(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager", **DESKTOP)
    session = webhook(console, "email-review", {"complaint": "After feedback without scripts"})
    first = item_of(page, session)
    context.close()
    context, page = open_page(browser, console, "manager", java_script_enabled=False, **DESKTOP)
    page.goto(first["url"])
    page.fill("#feedback", "warmer")
    page.click("#revise")
    page.wait_for_url(f"**/inbox/items/{first['id']}/after-feedback/")
    expect(page.locator("#after-feedback-title")).to_have_text("Feedback sent: a new draft is being written")
    _shot(page, "after-feedback-no-script-desktop-light")
    helper_context, helper = open_page(browser, console, "manager", **DESKTOP)
    second = item_of(helper, session, excluding=first["id"])  # the new draft exists now
    helper_context.close()
    page.reload()  # what "Check again" does
    expect(page.locator("#next-request")).to_have_attribute("href", second["url"])
    page.click("#next-request")
    page.wait_for_url(f"**{second['url']}")
    context.close()


TRIAGE_VALID = {"#id-f-summary": "Card payments fail at checkout", "#id-f-affected_customers": "120"}


@pytest.mark.parametrize(("size", "scheme"), [("desktop", "light"), ("desktop", "dark"), ("phone", "light")])
def test_the_triage_form_refuses_not_an_email_beside_the_field_and_keeps_it(console, browser, size, scheme):
    from playwright.sync_api import expect

    viewport = DESKTOP if size == "desktop" else PHONE
    context, page = open_page(browser, console, "manager", color_scheme=scheme, **viewport)
    session = webhook(console, "incident-triage", {"title": f"Form ({size}, {scheme})", "details": "500 on /pay"})
    page.goto(item_of(page, session)["url"])
    expect(page.locator("#payload dt", has_text="Title")).to_have_count(1)  # details as key/value
    expect(page.locator("#payload")).not_to_contain_text("{")
    expect(page.locator("label[for='id-f-components-0']")).to_have_text("Component 1")
    expect(page.locator("#id-f-components .list-row")).to_have_count(1)  # spare rows go with JavaScript
    expect(page.locator("#id-f-contact-email")).to_have_attribute("type", "email")
    page.select_option("#id-f-severity", label="high")
    for selector, value in TRIAGE_VALID.items():
        page.fill(selector, value)
    page.fill("#id-f-components-0", "checkout")
    page.click("#id-f-components .list-add")
    expect(page.locator("label[for='id-f-components-1']")).to_have_text("Component 2")
    page.fill("#id-f-components-1", "payments")
    page.click("#id-f-components .list-add")
    page.fill("#id-f-components-2", "search")
    page.click("#id-f-components .list-row:nth-child(2) .list-remove")  # "payments" goes; "search" moves up
    expect(page.locator("#id-f-components-1")).to_have_value("search")
    expect(page.locator("label[for='id-f-components-1']")).to_have_text("Component 2")
    page.fill("#id-f-contact-name", "Dana")
    page.fill("#id-f-contact-email", "not-an-email")
    page.click("#answer")
    expect(page.locator("#id-f-contact-email-error")).to_have_text("Enter an email address, e.g. name@example.com.")
    expect(page.locator("#id-f-contact-email")).to_have_value("not-an-email")  # kept
    expect(page.locator("#id-f-components-1")).to_have_value("search")
    page.locator("#id-f-contact-email").scroll_into_view_if_needed()
    _shot(page, f"form-email-error-{size}-{scheme}")
    page.fill("#id-f-contact-email", "dana@example.com")
    page.click("#answer")
    page.wait_for_url("**/inbox/")
    context.close()


def test_without_javascript_a_list_offers_a_fixed_number_of_rows(console, browser):
    from playwright.sync_api import expect

    session = webhook(console, "incident-triage", {"title": "Form without scripts"})
    helper_context, helper = open_page(browser, console, "manager", **DESKTOP)
    url = item_of(helper, session)["url"]
    helper_context.close()
    context, page = open_page(browser, console, "manager", java_script_enabled=False, **PHONE)
    page.goto(url)
    expect(page.locator("#id-f-components .list-row")).to_have_count(3)
    expect(page.locator("#id-f-components .list-add")).to_be_hidden()
    page.select_option("#id-f-severity", label="low")
    for selector, value in TRIAGE_VALID.items():
        page.fill(selector, value)
    page.fill("#id-f-components-0", "checkout")
    page.fill("#id-f-components-1", "payments")
    page.fill("#id-f-contact-name", "Dana")
    page.click("#answer")
    page.wait_for_url("**/inbox/")
    context.close()
