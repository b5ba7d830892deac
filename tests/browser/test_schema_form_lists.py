"""A generated form's list whose property names hold a dot and a space, in headless Chromium: rows
added and removed keep their names and ids in step (ids escape what names do not, and the page
gives schema_form.js the list's id), and the answer lands under the keys the schema names."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.browser import test_main_job
from tests.browser.inbox_support import item_of, open_page, serve
from tests.browser.test_main_job import WAIT_MS

pytestmark = pytest.mark.browser
browser = test_main_job.browser

TOKEN = "rc_schema-form-lists-token-0123456789abcdefghij"
MEMBER = {"type": "object", "title": "Member", "properties": {"full name": {"type": "string"}}}
SCHEMA = {"type": "object", "properties": {"the.team": {"type": "array", "title": "Team", "items": MEMBER}}}
LIST = "id-f-the~2e~team"


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("schema-lists"), "schema-lists-console.log", DEMO_API_TOKEN=TOKEN) as server:
        yield server


def _api(console, method, path, body=None):
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": uuid.uuid4().hex}
    response = httpx.request(method, f"{console.url}/api/v1{path}", json=body, headers=headers, timeout=WAIT_MS / 1000)
    assert response.status_code < 300, response.text
    return response.json()


def _field(page, row):
    return page.locator(f'[id="{LIST}-{row}-full~20~name"]')


def test_rows_of_a_list_with_a_dotted_name_are_added_removed_and_answered(console, browser):
    from playwright.sync_api import expect

    ask = {"title": "Team", "message": "Who is on it?", "queue": "support", "response_schema": SCHEMA}
    review = _api(console, "POST", "/reviews", ask)
    context, page = open_page(browser, console, "manager")
    page.goto(item_of(page, review["session_id"])["url"])
    rows = page.locator(f'[id="{LIST}"] .list-row')
    expect(rows).to_have_count(1)  # spare rows go with JavaScript
    _field(page, 0).fill("Ada")
    for row, name in ((1, "Bob"), (2, "Cy")):
        page.locator(f'[id="{LIST}"] .list-add').click()
        _field(page, row).fill(name)
    page.locator(f'[id="{LIST}"] .list-row:nth-child(2) .list-remove').click()  # Bob goes, Cy moves up
    expect(rows).to_have_count(2)
    expect(_field(page, 1)).to_have_value("Cy")
    expect(_field(page, 1)).to_have_attribute("name", "f.the~1team.1.full name")
    expect(page.locator(f'label[for="{LIST}-1-full~20~name"]')).to_have_text("Full name")
    page.click("#answer")
    page.wait_for_url("**/inbox/")
    answer = _api(console, "GET", f"/reviews/{review['id']}")["decision"]["answer"]
    assert answer == {"the.team": [{"full name": "Ada"}, {"full name": "Cy"}]}
    context.close()
