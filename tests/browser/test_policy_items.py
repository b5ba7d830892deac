"""Approval policies and the workflow's checks before a decision in the browser (issue 15), on the
demo refund (``reviewconsole/demo/refund_approval.py``, its rules and check in ``demo/__init__.py``).

- $40: the ``small-refunds`` rule approves it; the manager finds it in the inbox's resolved list
  with the "Decided by policy" filter, its decider ``policy: small-refunds`` with the rule's
  reason; only the ``submit_refund`` confirmation waits. An admin then replaces the rule by name
  in the admin (ticking "Replaces workflow rule") with a reason holding markup: the next $40
  refund shows that reason as text.
- $1,500 (four eyes): the manager's approval is the first of two ("1 of 2 approvals, by
  manager"), heard live on a second manager's open page ("Approved once, by manager"), the
  manager's second is refused with why, the second manager of the finance queue (made here as
  ``tests/personas.py`` makes its users: a user in ``queue:finance`` and ``managers:finance``)
  gives the second and the session asks for the confirmation.
- $700 (between the reason limit and the four-eyes limit): approving without a reason is refused
  with the workflow's message and decides nothing; with a reason it goes through.

The console is ``manage.py serve`` on a throwaway database with the demo data (``inbox_support.serve``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS, _manage
from tests.conftest import DEMO_PASSWORD

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too

DEMO_REASON = "Refunds up to $100 are approved by policy."
MARKUP_REASON = "Small refunds <b class='policy-marker'>pass</b> & are audited <script>window.__pwned = 1</script>"
REASON_MESSAGE = "Approving a refund above $500 needs a reason: give one with the decision. Nothing was recorded."
SECOND_MANAGER = "manager2"
MAKE_SECOND_MANAGER = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
user = get_user_model().objects.create_user({SECOND_MANAGER!r}, password={DEMO_PASSWORD!r})
user.groups.add(*Group.objects.filter(name__in=["queue:finance", "managers:finance"]))
assert user.groups.count() == 2
"""


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("policy-items"), "policy-items-console.log") as server:
        yield server


def refund(console, order_id: str, amount: float, reason: str = "Arrived broken") -> str:
    """Start a demo refund through its signed webhook; returns the session id."""
    return webhook(console, "refund-approval", {"order_id": order_id, "amount": amount, "reason": reason})


def approval_row(page: Any, order_id: str) -> Any:
    rows = page.locator("#items tr[data-id]", has_text=re.compile(rf"for order {re.escape(order_id)}\b"))
    return rows.filter(has_not_text="Submit refund")


def confirmation_row(page: Any, order_id: str) -> Any:
    return page.locator(
        "#items tr[data-id]", has_text=re.compile(rf"Submit refund .* for order {re.escape(order_id)}\b")
    )


WHAT = {"long_running": "ask_for_approval", "confirmation": "Confirm submit_refund"}


def listed(page: Any, session_id: str, query: str = "") -> list[tuple[str, str]]:
    """``(what, status)`` of the session's items that ``items.json?query`` lists now, ``what`` the
    request its kind stands for: ``ask_for_approval`` or ``Confirm submit_refund``."""
    items = page.evaluate(
        "async (q) => (await (await fetch('/inbox/items.json' + q, {credentials: 'same-origin'})).json()).items",
        f"?{query}" if query else "",
    )
    return [(WHAT[i["kind"]], i["status"]) for i in items if i["session_id"] == session_id]


def open_approval(page: Any, order_id: str) -> str:
    """Open the refund's approval request from the inbox list; returns the item page's path."""
    page.goto("/inbox/")
    approval_row(page, order_id).locator("a").click()
    page.wait_for_url("**/inbox/items/*/")
    return page.url


def approve(page: Any, reason: str = "") -> None:
    if reason:
        page.fill("#reason", reason)
    page.click("#approve")


def test_a_small_refund_is_decided_by_the_policy_and_only_its_confirmation_waits(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    first = refund(console, "PB-40", 40)
    expect(confirmation_row(page, "PB-40")).to_have_count(1)  # the run went on by itself
    expect(page.locator("#items tr[data-id]", has_text=re.compile(r"for order PB-40\b"))).to_have_count(1)
    assert listed(page, first) == [("Confirm submit_refund", "pending")]

    # An admin replaces the workflow's rule by name, with a reason holding markup.
    admin_context, admin = open_page(browser, console, "admin")
    admin.goto("/admin/policies/policyrule/add/")
    admin.select_option("#id_workflow", "refund-approval")
    admin.fill("#id_name", "small-refunds")
    admin.check("#id_replaces_workflow_rule")  # replacing the workflow's own rule is an explicit choice
    admin.fill("#id_tool", "ask_for_approval")
    admin.fill("#id_when", "double(args.amount) <= 100.0")
    admin.select_option("#id_decide", "approve")
    admin.fill("#id_reason", MARKUP_REASON)
    admin.click("input[name=_save]")
    expect(admin.locator(".messagelist")).to_contain_text("was added successfully")
    admin_context.close()
    second = refund(console, "PB-41", 41)
    expect(confirmation_row(page, "PB-41")).to_have_count(1)
    assert listed(page, second) == [("Confirm submit_refund", "pending")]

    # The resolved list, "Decided by policy": both approvals, not the confirmations that wait.
    page.locator("details.more-filters summary").click()
    page.check("#f-by-policy")
    page.locator(".filters button:has-text('Apply')").click()
    page.wait_for_url("**by_policy=1**")
    resolved = page.url
    expect(page.locator("#f-status")).to_have_value("resolved")
    expect(approval_row(page, "PB-40")).to_have_count(1)
    expect(approval_row(page, "PB-41")).to_have_count(1)
    expect(confirmation_row(page, "PB-40")).to_have_count(0)
    assert listed(page, first, "status=resolved&by_policy=1") == [("ask_for_approval", "resolved")]
    page.screenshot(path=str(ARTIFACTS / "policy-items-by-policy.png"))

    for order_id, reason in (("PB-40", DEMO_REASON), ("PB-41", MARKUP_REASON)):
        approval_row(page, order_id).locator("a").click()
        page.wait_for_url("**/inbox/items/*/")
        expect(page.locator("#decision-by")).to_have_text("policy: small-refunds")
        expect(page.locator("#decision-title")).to_have_text("Approved")
        expect(page.locator("#refund-title")).to_have_text("Refund approval")  # not "above the policy limit"
        expect(page.locator("#decision-reason")).to_have_text(reason)  # the markup shown as text
        expect(page.locator("#decision-form")).to_have_count(0)  # nothing left to decide
        assert page.locator(".policy-marker").count() == 0
        assert page.evaluate("window.__pwned") is None
        page.goto(resolved)
    context.close()


def test_a_large_refund_needs_two_different_managers(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session_id = refund(console, "PB-1500", 1500, "Parcel lost")
    expect(approval_row(page, "PB-1500")).to_have_count(1)
    item = open_approval(page, "PB-1500")
    expect(page.locator("#four-eyes")).to_contain_text("Four eyes: 0 of 2 approvals.")
    _manage(console.env, "shell", "-c", MAKE_SECOND_MANAGER)
    other_context, other = open_page(browser, console, SECOND_MANAGER)
    other.goto(item)  # open while the first approval is given: it hears of it live
    expect(other.locator("#status-banner")).to_have_attribute("data-state", "pending")
    approve(page, "Tracking shows the parcel lost")
    page.wait_for_url("**/inbox/")
    expect(page.locator(".messages")).to_contain_text("First approval recorded (1 of 2)")
    expect(other.locator("#status-banner")).to_contain_text("Approved once, by manager at ")
    expect(approval_row(page, "PB-1500")).to_have_count(1)  # still waiting: it resumed nothing
    assert listed(page, session_id) == [("ask_for_approval", "pending")]

    page.goto(item)
    four_eyes = page.locator("#four-eyes")
    expect(four_eyes).to_contain_text("Four eyes: 1 of 2 approvals, by manager at ")
    approve(page, "Approving again")
    conflict = page.locator("#conflict")
    expect(conflict).to_contain_text("You gave the first approval at ")
    expect(conflict).to_contain_text("a second, different person must approve it. Nothing was recorded.")
    expect(four_eyes).to_have_attribute("data-given", "1")
    page.screenshot(path=str(ARTIFACTS / "policy-items-four-eyes.png"))
    assert listed(page, session_id) == [("ask_for_approval", "pending")]

    other.reload()
    expect(other.locator("#four-eyes")).to_contain_text("1 of 2 approvals, by manager at ")
    approve(other, "Second pair of eyes: lost in transit")
    other.wait_for_url("**/inbox/")
    expect(confirmation_row(other, "PB-1500")).to_have_count(1)  # the session went on
    expect(approval_row(other, "PB-1500")).to_have_count(0)
    page.goto("/inbox/")
    expect(confirmation_row(page, "PB-1500")).to_have_count(1)
    assert listed(page, session_id) == [("Confirm submit_refund", "pending")]
    other.goto(item)
    expect(other.locator("#decision-by")).to_have_text(f"manager and {SECOND_MANAGER}")  # both approvers
    expect(other.locator("#decision-reason")).to_have_text("Second pair of eyes: lost in transit")
    other_context.close()
    context.close()


def test_approving_a_mid_sized_refund_needs_a_reason(console, browser):
    from playwright.sync_api import expect

    context, page = open_page(browser, console, "manager")
    session_id = refund(console, "PB-700", 700)
    expect(approval_row(page, "PB-700")).to_have_count(1)
    item = open_approval(page, "PB-700")
    expect(page.locator("#four-eyes")).to_have_count(0)  # one approval suffices
    expect(page.locator("label[for=reason]")).to_contain_text("(required to approve")
    approve(page)
    expect(page.locator("#error")).to_have_text(REASON_MESSAGE)
    expect(page.locator("#decision-form")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "policy-items-reason-refused.png"))

    page.goto(item)  # nothing was decided
    expect(page.locator("#status-banner")).to_have_attribute("data-state", "pending")
    expect(page.locator("#decision-by")).to_have_count(0)
    assert listed(page, session_id) == [("ask_for_approval", "pending")]

    approve(page, "Photos of the damage attached")
    page.wait_for_url("**/inbox/")
    expect(confirmation_row(page, "PB-700")).to_have_count(1)
    expect(approval_row(page, "PB-700")).to_have_count(0)
    page.goto(item)
    expect(page.locator("#decision-by")).to_have_text("manager")
    expect(page.locator("#decision-reason")).to_have_text("Photos of the damage attached")
    context.close()
