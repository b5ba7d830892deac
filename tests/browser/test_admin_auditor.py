"""The auditor's admin in headless Chromium at 1280×800 (issue 17): the record first on the index,
and the session list readable: every column inside the window (Created and Updated not clipped),
each session's outcome. Screenshots: ``test-artifacts/admin-index-1280.png``,
``admin-sessions-1280.png``."""

from __future__ import annotations

import re

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS

pytestmark = pytest.mark.browser
browser = test_main_job.browser

LONG = "My phone battery drains too fast, and the charger that came with it gets hot within minutes " * 2


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("admin-auditor"), "admin-auditor-console.log") as server:
        yield server


def test_the_auditor_reads_the_session_list_at_1280(console, browser):
    from playwright.sync_api import expect

    approved = webhook(console, "email-review", {"complaint": "Approve this one"})
    waiting = webhook(console, "email-review", {"complaint": LONG.strip()})
    webhook(console, "vip-discount", {"customer_id": "c123"})
    context, page = open_page(browser, console, "manager")
    page.goto(item_of(page, approved)["url"])
    page.click("#approve")
    page.wait_for_url("**/inbox/")
    item_of(page, waiting)
    context.close()

    context, page = open_page(browser, console, "auditor", viewport={"width": 1280, "height": 800})
    page.goto("/admin/")
    record = page.locator("#content-main .module").first
    expect(record.locator("caption")).to_have_text("The record")
    expect(record.locator("th[scope=row]")).to_have_text(
        ["Workflow sessions", "Items", "Decisions", "Webhook deliveries", "Outbound messages", "Audit entries"]
    )
    expect(page.locator("#content-main")).not_to_contain_text("Checkpoints")
    page.screenshot(path=ARTIFACTS / "admin-index-1280.png", full_page=True)

    page.goto("/admin/workflow_sessions/workflowsession/")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    approved_row = rows.filter(has=page.locator(f"code[title='{approved}']"))
    expect(approved_row.locator("td.field-outcome")).to_have_text("approved")
    expect(rows.filter(has=page.locator(f"code[title='{waiting}']")).locator("td.field-outcome")).to_have_text(
        "waiting"
    )
    # Nothing scrolls sideways, and every header and cell ends inside the window.
    overflow = page.evaluate(
        "() => { const r = document.querySelector('#changelist .results');"
        " return [r.scrollWidth, r.clientWidth, document.documentElement.scrollWidth, window.innerWidth]; }"
    )
    assert overflow[0] <= overflow[1] and overflow[2] <= overflow[3], overflow
    edges = page.eval_on_selector_all(
        "#result_list th, #result_list td", "cells => cells.map((c) => c.getBoundingClientRect().right)"
    )
    assert max(edges) <= 1280, max(edges)
    for column in ("created", "updated"):
        whole = page.eval_on_selector_all(
            f"#result_list td.field-{column}", "cells => cells.map((c) => c.scrollWidth <= c.clientWidth)"
        )
        assert whole == [True, True, True], column  # the whole time shows, on one line
    expect(page.locator("#result_list td.field-created").first).to_have_text(
        re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")
    )
    page.screenshot(path=ARTIFACTS / "admin-sessions-1280.png", full_page=False)
    context.close()
