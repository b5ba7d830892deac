"""Every page of the console passes axe-core with no serious or critical violation (issue 17).

axe-core (npm, a dev dependency in package.json; ``tools/ensure-static`` runs ``npm ci``) is
served by the console itself (``/static/vendor/axe-core/axe.min.js``: the CSP allows scripts from
the console's origin only) and run in each page by Playwright with its default rules (WCAG 2 A
and AA and best practices). The pages: the login page, the inbox, each demo kind's request page
pending and decided (an email draft, a VIP discount, a refund's approval and its confirmation, a
triage form), New request and its form, a session's page, the managers' dashboard, the admin
(its login, index, the record's changelists, a session), and the error pages (404, 403). Each
page's violations of any impact go to ``test-artifacts/axe/<page>.json``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve, webhook
from tests.browser.test_main_job import ARTIFACTS, WAIT_MS

pytestmark = pytest.mark.browser
browser = test_main_job.browser

TOKEN = "rc_accessibility-check-token-0123456789abcdefghij"
AXE = "/static/vendor/axe-core/axe.min.js"
BLOCKING = ("serious", "critical")
RECORD = ["workflow_sessions/workflowsession", "inbox/item", "console/decision", "hooks/webhookdelivery"]
RECORD += ["outbound/outboundmessage", "audit/auditentry"]


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("accessibility"), "accessibility-console.log", DEMO_API_TOKEN=TOKEN) as server:
        yield server


def _api(console, method: str, path: str, body: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": uuid.uuid4().hex}
    response = httpx.request(method, f"{console.url}/api/v1{path}", json=body, headers=headers, timeout=WAIT_MS / 1000)
    assert response.status_code < 300, response.text
    return response.json()


def _violations(page, name: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each (all
    of them, whatever their impact, go to ``test-artifacts/axe/<name>.json``)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(url=AXE)
    found = page.evaluate("async () => (await axe.run(document, { resultTypes: ['violations'] })).violations")
    folder = ARTIFACTS / "axe"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    return [
        f"{name}: {v['impact']} {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes']][:5]}"
        for v in found
        if v["impact"] in BLOCKING
    ]


def _check(page, path: str, name: str, problems: list[str], *, status: int = 200) -> None:
    response = page.goto(path)
    assert response is not None and response.status == status, (path, response and response.status)
    page.wait_for_load_state("load")
    problems += _violations(page, name)


def test_no_page_has_a_serious_or_critical_violation(console, browser):
    problems: list[str] = []
    anonymous = browser.new_context(base_url=console.url)
    anonymous.set_default_timeout(WAIT_MS)
    page = anonymous.new_page()
    _check(page, "/accounts/login/", "login", problems)
    _check(page, "/admin/login/", "admin-login", problems)
    anonymous.close()

    sessions = {
        "email": webhook(console, "email-review", {"complaint": "My phone battery drains too fast"}),
        "vip": webhook(console, "vip-discount", {"customer_id": "c123"}),
        "refund": webhook(console, "refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Broken"}),
        "triage": webhook(console, "incident-triage", {"title": "Checkout down", "details": "502 since 14:05"}),
    }
    context, page = open_page(browser, console, "manager", viewport={"width": 1280, "height": 800})
    pending = {kind: item_of(page, session) for kind, session in sessions.items()}
    _check(page, "/inbox/", "inbox", problems)
    for kind, item in pending.items():
        _check(page, item["url"], f"item-{kind}-pending", problems)

    # Each decided (through the API, as a system would), and the refund's confirmation that follows.
    answers = {
        "email": "approve",
        "vip": True,
        "refund": {"status": "approved"},
        "triage": {
            "severity": "low",
            "summary": "A restart fixed checkout",
            "affected_customers": 12,
            "contact": {"name": "Ada"},
        },
    }
    for kind, payload in answers.items():
        _api(
            console,
            "POST",
            f"/sessions/{sessions[kind]}/resume",
            {"interrupt_id": pending[kind]["interrupt_id"], "payload": payload},
        )
    confirmation = item_of(page, sessions["refund"], excluding=pending["refund"]["id"])
    _check(page, confirmation["url"], "item-refund-confirmation-pending", problems)
    for kind, item in pending.items():
        _check(page, item["url"], f"item-{kind}-decided", problems)

    # The waiting page of a request still pending (an approved one redirects to its own page).
    _check(page, f"{confirmation['url']}after-feedback/", "after-feedback", problems)
    _check(page, "/new/", "new-request", problems)
    _check(page, "/new/email-review/", "new-request-form", problems)
    _check(page, f"/sessions/{sessions['email']}/", "session", problems)
    _check(page, "/dashboard/", "dashboard", problems)
    _check(page, "/inbox/items/999999/", "error-404", problems, status=404)
    context.close()

    context, page = open_page(browser, console, "reviewer")
    _check(page, "/dashboard/", "error-403", problems, status=403)
    context.close()

    context, page = open_page(browser, console, "auditor", viewport={"width": 1280, "height": 800})
    _check(page, "/admin/", "admin-index", problems)
    for listing in RECORD:
        _check(page, f"/admin/{listing}/", f"admin-{listing.replace('/', '-')}", problems)
    _check(page, f"/admin/workflow_sessions/workflowsession/{sessions['email']}/change/", "admin-session", problems)
    context.close()

    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)
