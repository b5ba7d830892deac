"""An ADK agent's request decided in the browser (issue 14): the real google-adk run pauses on the
adapter's long-running tool, a manager approves it in the inbox in headless Chromium, and the
adapter resumes the run, whose final answer says it was reimbursed.

The agent is ADK's reimbursement pattern (its ``human_in_loop`` sample) as in
``tests/clients/test_adk.py``: a real ``LlmAgent`` under a ``Runner`` driven by the scripted
``ReimbursementModel`` (a ``BaseLlm``, no network), with ``ReviewTool`` filing the approval in the
finance queue through ``reviewconsole_client.AsyncClient``. It runs on a thread with its own event
loop (Playwright's sync API owns this one): it asks, hands the review id to the test, and blocks
in ``wait_and_resume``. The console is ``manage.py serve`` on a throwaway database with the demo
data and the ``demo`` API client's token (``DEMO_API_TOKEN``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import open_page, serve
from tests.browser.test_main_job import ARTIFACTS, WAIT_MS

pytestmark = pytest.mark.browser
browser = test_main_job.browser  # the headless Chromium fixture, used here too

TOKEN = "rc_browser-adk-token-0123456789abcdefghijklmnop"
PURPOSE = "conference <b class='adk-marker'>travel</b> & hotel"
TITLE = f"Reimburse $200 for {PURPOSE}?"


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("adk-review"), "adk-review-console.log", DEMO_API_TOKEN=TOKEN) as server:
        yield server


class AdkRun:
    """The ADK agent on a thread of its own: :attr:`review_id` once it paused, :attr:`result` at the end."""

    def __init__(self, url: str, text: str) -> None:
        self.url = url
        self.text = text
        self.review_id: concurrent.futures.Future[str] = concurrent.futures.Future()
        self.result: concurrent.futures.Future[dict] = concurrent.futures.Future()
        self.thread = threading.Thread(target=self._run, name="adk-run", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result.set_result(asyncio.run(self._agent()))
        except BaseException as error:  # the test sees it on either future
            if not self.review_id.done():
                self.review_id.set_exception(error)
            self.result.set_exception(error)

    async def _agent(self) -> dict:
        from reviewconsole_client import AsyncClient
        from reviewconsole_client.adk import pending_reviews, wait_and_resume

        from tests.clients.test_adk import Agent

        async with AsyncClient(self.url, TOKEN) as client:
            agent = Agent(client)
            session_id, first = await agent.ask(self.text)
            [review_id] = pending_reviews(first)
            reimbursed_before = list(agent.reimbursed)
            self.review_id.set_result(review_id)
            resumed = await wait_and_resume(agent.runner, client, review_id, timeout=WAIT_MS / 1000 * 6)
            review = await client.get(review_id)
            session = await agent.sessions.get_session(
                app_name="reimbursements", user_id="employee-7", session_id=session_id
            )
            return {
                "first": first,
                "resumed": resumed,
                "reimbursed_before": reimbursed_before,
                "reimbursed": agent.reimbursed,
                "review": review,
                "session_events": session.events,
            }


def texts(events) -> list[str]:
    return [p.text for e in events if e.content for p in e.content.parts if p.text]


def test_a_manager_approves_an_adk_agents_reimbursement_in_the_browser_and_the_run_ends_reimbursed(console, browser):
    from playwright.sync_api import expect

    run = AdkRun(console.url, f"Please reimburse $200 for {PURPOSE}")
    review_id = run.review_id.result(timeout=WAIT_MS / 1000 * 3)

    context, page = open_page(browser, console, "manager")
    row = page.locator("#items tr[data-id]", has_text=TITLE)
    expect(row).to_have_count(1)  # rendered, or inserted live when the item came after the page
    expect(row.locator("a")).to_have_text(TITLE)  # the markup shown as text
    assert page.locator(".adk-marker").count() == 0
    page.screenshot(path=str(ARTIFACTS / "adk-review-inbox.png"))

    row.locator("a").click()
    page.wait_for_url("**/inbox/items/*/")
    expect(page.locator("#message")).to_have_text(f"employee-7 asks to be reimbursed $200 for {PURPOSE}.")
    expect(page.locator("#payload dt", has_text="Amount")).to_have_count(1)  # key/value, not JSON
    expect(page.locator("#payload")).to_contain_text("200")
    expect(page.locator("#payload")).to_contain_text(PURPOSE)
    assert page.locator(".adk-marker").count() == 0
    assert not run.result.done()  # the ADK run still waits for the decision
    page.click("#approve")
    page.wait_for_url("**/inbox/")
    expect(page.locator("#items tr[data-id]", has_text=TITLE)).to_have_count(0)
    context.close()

    done = run.result.result(timeout=WAIT_MS / 1000 * 3)
    assert done["reimbursed_before"] == []
    assert texts(done["first"])[-1] == f"Your request waits for a manager (review {review_id})."
    assert done["reimbursed"] == [(PURPOSE, 200.0)]
    assert texts(done["resumed"])[-1] == "Reimbursed: ok."
    [call] = [c for e in done["resumed"] for c in e.get_function_calls()]
    assert (call.name, call.args) == ("reimburse", {"purpose": PURPOSE, "amount": 200.0})
    review = done["review"]
    assert (review.status, review.decision.action, review.decision.by) == ("decided", "approve", "manager")
    [answer] = [r for e in done["session_events"] if e.author == "user" for r in e.get_function_responses()]
    assert (answer.name, answer.response["status"], answer.response["review_id"]) == (
        "ask_for_approval",
        "approved",
        review_id,
    )
