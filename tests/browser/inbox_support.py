"""Shared by the inbox's browser tests: a console per module, logged-in pages, webhooks, and a
websocket route that can black-hole the inbox socket (a network drop without a close frame).

The console is ``manage.py serve`` on a throwaway database (see ``test_main_job.py``) with a
one-second heartbeat, so a dead socket is noticed within 2.25 s instead of 22.5.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.browser.test_main_job import ARTIFACTS, START_DEADLINE, WAIT_MS, Console, _free_port, _manage
from tests.conftest import DEMO_PASSWORD, DEMO_SECRET, signed_headers

HEARTBEAT_SECONDS = 1.0

# Notes, per page, when each inbox row entered or left the DOM (ms since the epoch).
ROW_TIMES = """
window.__rowIn = {}; window.__rowOut = {}; window.__statusLog = [];
new MutationObserver((records) => {
  for (const record of records) {
    for (const node of record.addedNodes) {
      if (node.nodeType !== 1 || !node.matches("tr[data-id]") || !node.closest("#items")) continue;
      if (!(node.dataset.id in window.__rowIn)) window.__rowIn[node.dataset.id] = Date.now();
    }
    for (const node of record.removedNodes) {
      if (node.nodeType === 1 && node.matches("tr[data-id]")) window.__rowOut[node.dataset.id] = Date.now();
    }
    const target = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    if (target && target.id === "live-status")
      window.__statusLog.push([Date.now(), target.textContent]);
    const banner = document.getElementById("status-banner");
    if (banner && (record.target === banner || record.target.parentElement === banner) && !window.__bannerAt)
      window.__bannerAt = Date.now();
  }
}).observe(document, { childList: true, subtree: true, characterData: true });
"""


@contextmanager
def serve(tmp: Path, log_name: str, **extra_env: str) -> Iterator[Console]:
    """The console on a fresh database with the demo data, until the block ends."""
    ARTIFACTS.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.embedded",
        "REVIEWCONSOLE_VAR_DIR": str(tmp / "var"),
        "DEMO_PASSWORD": DEMO_PASSWORD,
        "DEMO_WEBHOOK_SECRET": DEMO_SECRET,
        "PYTHONUNBUFFERED": "1",
        "REVIEWCONSOLE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
        "REVIEWCONSOLE_NOTIFY_EMAIL": "0",
        **extra_env,
    }
    _manage(env, "migrate", "--no-input")
    _manage(env, "demo")
    server = Console(env, _free_port(), ARTIFACTS / log_name)
    try:
        assert server.ready.wait(START_DEADLINE), f"the console did not start; see {server.log}"
        yield server
    finally:
        server.stop()


def open_page(browser: Any, console: Console, username: str, **context_args: Any) -> tuple[Any, Any]:
    """A new browser context logged in as ``username``, on its inbox."""
    context = browser.new_context(base_url=console.url, **{"viewport": {"width": 1100, "height": 800}, **context_args})
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(ROW_TIMES)
    page = context.new_page()
    page.goto("/inbox/")
    page.fill("#id_username", username)
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("button:has-text('Log in')")
    page.wait_for_url("**/inbox/")
    return context, page


def endpoint_secret(console: Console, slug: str) -> str:
    """The signing secret of endpoint ``slug`` in the console's database (the demo gives each
    endpoint its own; ``email-review``'s is ``DEMO_SECRET``)."""
    database = Path(console.env["REVIEWCONSOLE_VAR_DIR"]) / "reviewconsole.sqlite3"
    with closing(sqlite3.connect(database)) as connection:
        row = connection.execute(
            "SELECT s.secret FROM hooks_webhooksecret s JOIN hooks_webhookendpoint e ON s.endpoint_id = e.id "
            "WHERE e.slug = ? ORDER BY s.created_at DESC LIMIT 1",
            (slug,),
        ).fetchone()
    return row[0] if row else DEMO_SECRET


def webhook(console: Console, slug: str, data: Any) -> str:
    """Start a session of workflow ``slug`` through its signed webhook; returns the session id."""
    body = json.dumps(data)
    signed = signed_headers(body, secret=endpoint_secret(console, slug), webhook_id=f"msg_{uuid.uuid4().hex}")
    headers = {"content-type": "application/json", **signed}
    response = httpx.post(f"{console.url}/hooks/{slug}/", content=body, headers=headers, timeout=10)
    assert response.status_code == 202, response.text
    return response.json()["session_id"]


ITEM_OF = """async ([session, excluding]) => {
  const answer = await fetch("/inbox/items.json", { credentials: "same-origin" });
  if (!answer.ok) return null;
  const items = (await answer.json()).items;
  return items.find((i) => i.session_id === session && i.id !== excluding) || null;
}"""


def item_of(page: Any, session_id: str, *, excluding: int | None = None, timeout: float = WAIT_MS) -> dict[str, Any]:
    """The pending item of a session, as the page's ``items.json`` lists it, once it is listed
    (asked again every 100 ms; ``timeout`` ms is the guard). ``excluding``: an item id to pass
    over (the session's earlier request, when waiting for the next)."""
    deadline = time.monotonic() + timeout / 1000
    while True:
        # The handle has been seen to read null once the function ended truthy (a navigation of the
        # page between the two calls, on a loaded machine): ask again rather than return None.
        found = page.wait_for_function(ITEM_OF, arg=[session_id, excluding], polling=100, timeout=timeout)
        item = found.json_value()
        if item:
            return item
        assert time.monotonic() < deadline, f"no item of session {session_id} listed"


def rows(page: Any) -> list[str]:
    return page.eval_on_selector_all("#items tr[data-id]", "(trs) => trs.map((tr) => tr.dataset.id)")


def fresh_rows(page: Any) -> list[str]:
    """The rows a fresh load of the page would show (its own snapshot, same filters)."""
    return page.evaluate(
        "async () => (await (await fetch('/inbox/items.json' + location.search, {credentials: 'same-origin'}))"
        ".json()).items.map((i) => String(i.id))"
    )


class SocketSwitch:
    """Routes a page's inbox socket through the test: ``down`` black-holes it both ways (no close
    frame, as when the network drops) and keeps new sockets from reaching the server."""

    def __init__(self, page: Any) -> None:
        self.down = False
        self.opened = 0
        self.before_connect: Any = None
        page.route_web_socket("**/ws/inbox/", self._route)

    def _route(self, ws: Any) -> None:
        self.opened += 1
        if self.down:
            return  # never connected: the page's socket hears nothing, its heartbeat gives up
        if self.before_connect is not None:
            hook, self.before_connect = self.before_connect, None
            hook()
        server = ws.connect_to_server()

        def to_server(message: Any) -> None:
            if not self.down:
                server.send(message)

        def to_page(message: Any) -> None:
            if not self.down:
                ws.send(message)

        ws.on_message(to_server)
        server.on_message(to_page)
