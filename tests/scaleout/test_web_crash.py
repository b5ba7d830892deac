"""A Daphne process killed (``kill -9``) while reviewers have the inbox open, behind nginx.

Two reviewers' inbox pages run in headless Chromium through nginx. Each Daphne process is killed
in turn (the killed one is started again before the next is killed), so every page loses its
websocket at least once. Meanwhile items are created and one is decided. Each page must notice,
reconnect through nginx to a live process, and catch up: its rows end up exactly those of a fresh
``items.json``, with no reload of the page.
"""

from __future__ import annotations

import shutil

import pytest

from tests.scaleout.clients import Reviewer
from tests.scaleout.stack_parts import wait_for

pytestmark = pytest.mark.scaleout

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--ignore-certificate-errors",
]
# Notes every change of the live badge (its "live" class) and whether the document was replaced.
WATCH = """
window.__liveChanges = [];
window.__sameDocument = true;
document.addEventListener("DOMContentLoaded", () => {
  const badge = document.getElementById("live-status");
  if (!badge) return;
  new MutationObserver(() => window.__liveChanges.push(badge.classList.contains("live")))
    .observe(badge, { attributes: true, attributeFilter: ["class"] });
});
"""


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def _inbox_page(browser, stack, reviewer: Reviewer):
    context = browser.new_context(base_url=stack.url, ignore_https_errors=True)
    context.set_default_timeout(15_000)
    context.add_init_script(WATCH)
    context.add_cookies(
        [{"name": c.name, "value": c.value, "url": stack.url} for c in reviewer.http.cookies.jar]  # type: ignore[misc]
    )
    page = context.new_page()
    page.goto("/inbox/")
    page.wait_for_selector("#live-status.live")
    return page


def _rows(page) -> set[str]:
    return set(page.eval_on_selector_all("#items tr[data-id]", "rows => rows.map(r => r.dataset.id)"))


def _caught_up(page, reviewer: Reviewer) -> bool:
    live = page.eval_on_selector("#live-status", "b => b.classList.contains('live')")
    return bool(live) and _rows(page) == {str(i["id"]) for i in reviewer.items()}


def test_pages_reconnect_to_another_process_and_catch_up(healthy, browser):
    stack = healthy
    people = [Reviewer(stack, "manager").login(), Reviewer(stack, "manager").login()]
    pages = [_inbox_page(browser, stack, person) for person in people]
    for page in pages:
        page.evaluate("window.__sameDocument = 'marked'")
    decider = people[0]
    for round_, web in enumerate(stack.webs):
        stack.kill(web)
        # While it is down: new items arrive (through the process still up) and one is decided.
        created = [stack.start_probe(label=f"web-{round_}-{n}") for n in range(3)]
        for sid in created:
            stack.wait_status(sid, "waiting")
        victim = next(i for i in decider.items() if i["session_id"] == created[0])
        assert decider.decide(victim["id"], "approve").status_code == 302
        for person, page in zip(people, pages, strict=True):
            wait_for(lambda p=page, r=person: _caught_up(p, r), 30, f"page caught up after {web.name} died")
        stack.launch(web)
        stack.wait_ready(web)
    for page in pages:
        changes = page.evaluate("window.__liveChanges")
        assert False in changes, "the page never noticed its socket drop"
        assert changes[-1] is True, "the page is not live again"
        assert page.evaluate("window.__sameDocument") == "marked", "the page was reloaded"
