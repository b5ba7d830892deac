"""Hostile text renders inert: complaints, drafts, feedback and payloads full of script and markup.

Runs the real console (``manage.py serve``) and headless Chromium. Sessions are started and
answered through the API with text that would run script or add elements if a page interpreted
it; then every page that shows it (the inbox list, rows inserted live over the websocket, each
item's page, the auditor's admin pages) is checked: no script ran (no dialog, the ``__xss`` trap
unset), no element from the text exists, no CSP violation was reported, and the text is shown
literally.
"""

from __future__ import annotations

import json
import os
import uuid

import httpx
import pytest

from tests.browser.inbox_support import item_of
from tests.browser.test_main_job import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    START_DEADLINE,
    WAIT_MS,
    Console,
    _free_port,
    _log_in,
    _manage,
    browser,
)
from tests.conftest import DEMO_PASSWORD, DEMO_SECRET

pytestmark = pytest.mark.browser

TOKEN = "rc_xss_test_token_000000000000000000000000000"
HOSTILE = (
    '<script>window.__xss=1</script><img class="xss-img" src=x onerror="window.__xss=2">'
    '<b class="xss-marker">bold</b>"\'><svg class="xss-svg" onload="window.__xss=3"></svg>'
    '<a class="xss-link" href="javascript:window.__xss=4">link</a>{{ 7*7 }}{% now \'Y\' %}'
)
TRAP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective));
"""
INERT = """() => ({
  xss: window.__xss === undefined ? null : window.__xss,
  elements: document.querySelectorAll(".xss-img, .xss-marker, .xss-svg, .xss-link").length,
  csp: window.__csp,
  text: document.body.innerText,
})"""


@pytest.fixture
def console(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.embedded",
        "REVIEWCONSOLE_VAR_DIR": str(tmp_path / "var"),
        "DEMO_PASSWORD": DEMO_PASSWORD,
        "DEMO_WEBHOOK_SECRET": DEMO_SECRET,
        "DEMO_API_TOKEN": TOKEN,
        "PYTHONUNBUFFERED": "1",
    }
    _manage(env, "migrate", "--no-input")
    _manage(env, "demo")
    server = Console(env, _free_port(), ARTIFACTS / "xss-console.log")
    try:
        assert server.ready.wait(START_DEADLINE), f"the console did not start; see {server.log}"
        yield server
    finally:
        server.stop()


def _api(console, method, path, body=None):
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": uuid.uuid4().hex}
    response = httpx.request(method, f"{console.url}/api/v1{path}", json=body, headers=headers, timeout=10)
    assert response.status_code < 300, response.text
    return response.json()


def _wait(console, session_id, status):
    import time

    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        session = _api(console, "GET", f"/sessions/{session_id}")
        if session["status"] == status:
            return session
        time.sleep(0.1)
    raise AssertionError(f"session {session_id} did not become {status}: {session['status']}")


def _assert_inert(page, where, *, shows_text=True):
    seen = page.evaluate(INERT)
    assert seen["xss"] is None, f"{where}: a script from the text ran ({seen['xss']})"
    assert seen["elements"] == 0, f"{where}: markup from the text became elements"
    assert seen["csp"] == [], f"{where}: CSP violations {seen['csp']} (markup was interpreted)"
    shown = 'class="xss-marker"' in seen["text"]
    if shows_text:
        assert shown, f"{where}: the text is not shown literally"
    return shown


def test_hostile_text_renders_inert_everywhere(console, browser):  # noqa: F811 (the imported fixture)
    dialogs = []
    context = browser.new_context(base_url=console.url)
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(TRAP)
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    review = _api(console, "POST", "/sessions", {"workflow": "email-review", "input": {"complaint": HOSTILE}})
    refund = _api(
        console,
        "POST",
        "/sessions",
        {
            "workflow": "refund-approval",
            "input": {"order_id": 'A-<b class="xss-marker">1</b>', "amount": 250.0, "reason": HOSTILE},
        },
    )
    _wait(console, review["session_id"], "waiting")
    # Feedback full of markup: the next draft quotes it.
    _api(console, "POST", f"/sessions/{review['session_id']}/resume", {"payload": {"result": HOSTILE}})
    _wait(console, refund["session_id"], "waiting")

    _log_in(page, "manager")
    page.wait_for_url(f"{console.url}/inbox/")
    _assert_inert(page, "the inbox list")
    # A row inserted live over the websocket.
    page.wait_for_function("() => document.querySelector('#live-status')?.textContent === 'live'")
    live = _api(console, "POST", "/sessions", {"workflow": "email-review", "input": {"complaint": HOSTILE + " live"}})
    _wait(console, live["session_id"], "waiting")
    row = item_of(page, live["session_id"])
    page.wait_for_selector(f"#items tr[data-id='{row['id']}']")  # inserted over the websocket
    _assert_inert(page, "the inbox with a live row")
    page.screenshot(path=ARTIFACTS / "xss-inbox.png", full_page=True)

    links = page.eval_on_selector_all("#items a[href*='/inbox/items/']", "els => els.map(e => e.getAttribute('href'))")
    assert len(links) >= 3, links
    shown = 0
    for href in links:
        page.goto(href)
        shown += _assert_inert(page, href, shows_text=False)
    assert shown >= 2, "the hostile text should be shown (literally) on the items that hold it"
    page.screenshot(path=ARTIFACTS / "xss-detail.png", full_page=True)
    context.close()

    context = browser.new_context(base_url=console.url)
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(TRAP)
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto("/admin/login/")
    page.fill("#id_username", "auditor")
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("input[type=submit]")
    for session_id in (review["session_id"], refund["session_id"], live["session_id"]):
        page.goto(f"/admin/workflow_sessions/workflowsession/{session_id}/change/")
        _assert_inert(page, f"the admin page of {session_id}")
    page.screenshot(path=ARTIFACTS / "xss-admin-session.png", full_page=True)
    for listing in (
        "workflow_sessions/workflowsession",
        "inbox/item",
        "console/decision",
        "audit/auditentry",
    ):
        page.goto(f"/admin/{listing}/")
        _assert_inert(page, listing, shows_text=False)
    page.goto(f"/admin/workflow_sessions/workflowsession/?q={json.dumps('xss-marker')}")
    _assert_inert(page, "a search", shows_text=False)
    context.close()
    assert dialogs == []
