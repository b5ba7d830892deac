"""New request in a real browser: a manager starts an email review from the generated form, is
taken to its item once the workflow asks (which says that someone else must approve it: the
requester never approves their own), a reviewer of the queue approves it, and the manager sees the
session complete.

Against ``manage.py serve`` on a throwaway database (``inbox_support.serve``: Daphne, the database
task worker in-process); every wait is on the page's state, never a sleep.
"""

from __future__ import annotations

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import open_page, serve
from tests.browser.test_main_job import ARTIFACTS

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too
COMPLAINT = "My <b>phone</b> battery drains too fast"


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("new-request"), "new-request-console.log") as server:
        yield server


def test_a_manager_starts_a_session_from_the_form_decides_it_and_sees_it_complete(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    page.click("#new-request")
    page.wait_for_url("**/new/")
    page.click("a[data-workflow='email-review']")
    page.wait_for_url("**/new/email-review/")

    page.click("#start")  # nothing filled in: the field's error, nothing started
    expect(page.locator("#error")).to_have_text("Correct the highlighted fields; nothing was started.")
    expect(page.locator("#id-f-complaint-error")).to_have_text("This field is required.")

    page.fill("#id-f-complaint", COMPLAINT)
    page.screenshot(path=ARTIFACTS / "new-request-form.png", full_page=True)
    page.click("#start")
    page.wait_for_url("**/inbox/items/*/")  # the session's page opened its item once it asked
    expect(page.locator("#item-title")).to_have_text("Email reply — About your message: " + COMPLAINT)
    expect(page.locator("#workflow-title")).to_have_text("Email draft review")
    expect(page.locator("body")).to_contain_text(COMPLAINT)  # as text, not markup
    assert page.locator("b", has_text="phone").count() == 0
    session_id = page.locator("p.meta code").first.inner_text()
    page.screenshot(path=ARTIFACTS / "new-request-item.png", full_page=True)

    expect(page.locator("#own-request")).to_contain_text("You started this session: someone else must approve")
    expect(page.locator("#approve")).to_have_count(0)
    item = page.url
    other_context, other = open_page(browser, console, "reviewer")
    other.goto(item)
    other.click("#approve")
    other.wait_for_url("**/inbox/")
    other_context.close()
    page.goto(f"/sessions/{session_id}/")
    expect(page.locator("#session-status")).to_have_attribute("data-status", "completed")
    expect(page.locator("#session-result")).to_have_text("Draft approved and sent successfully.")
    page.screenshot(path=ARTIFACTS / "new-request-completed.png", full_page=True)
    context.close()


def test_the_start_button_is_disabled_once_the_form_is_submitted_and_a_second_submit_is_stopped(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    page.goto("/new/email-review/")
    page.fill("#id-f-complaint", COMPLAINT)
    # A document listener added after schema_form.js's runs after it: it records whether that one
    # stopped the submit, then holds it on the page so the state after it can be looked at.
    page.evaluate(
        "window.stopped = []; document.addEventListener('submit', (e) => {"
        " window.stopped.push(e.defaultPrevented); e.preventDefault(); })"
    )
    page.click("#start")
    expect(page.locator("#start")).to_be_disabled()
    page.locator("#start-form").evaluate("(form) => form.requestSubmit()")  # a second submit, e.g. Enter
    assert page.evaluate("window.stopped") == [False, True]
    context.close()
