"""A served console for the client's tests, and a reviewer who decides in its inbox over HTTP.

:func:`serve_console` prepares an :class:`~tests.console.embedded.EmbeddedConsole` (``manage.py
serve`` on SQLite in a temporary ``var/``) with the demo data: the users ``manager`` (a manager
of every demo queue) and ``reviewer`` (the support queue only), the queues, and the ``demo`` API
client whose token is :data:`TOKEN`. :class:`Reviewer` logs in through the login page (Django
auth, CSRF) and decides an item through the inbox's decide view, as a person's browser would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from reviewconsole_client import Client

from tests.conftest import DEMO_PASSWORD, DEMO_SECRET
from tests.console.embedded import EmbeddedConsole
from tests.scaleout.stack_parts import wait_for

TOKEN = "rc_client-tests-token-0123456789abcdefghijklmnop"
ENSURE_CLIENT = f"""
from reviewconsole.api.models import ApiClient, hash_token
if not ApiClient.objects.filter(token_hash=hash_token({TOKEN!r})).exists():
    client = ApiClient(name="client-tests", workflows=["*"])
    client.set_token({TOKEN!r})
    client.save()
"""


def serve_console(directory: Path, env: dict[str, str] | None = None) -> EmbeddedConsole:
    """Migrate, load the demo data and the API client, start ``serve``; the running console."""
    console = EmbeddedConsole(
        directory,
        env={
            "DEMO_PASSWORD": DEMO_PASSWORD,
            "DEMO_WEBHOOK_SECRET": DEMO_SECRET,
            "DEMO_API_TOKEN": TOKEN,
            **(env or {}),
        },
    )
    console.manage("migrate", "--no-input", "--verbosity", "0")
    console.manage("demo")
    console.shell(ENSURE_CLIENT)  # when demo makes no client from DEMO_API_TOKEN
    return console.start(migrate=False)


class Reviewer:
    """A person logged in to the console (``username`` with the demo password) over real HTTP."""

    def __init__(self, base_url: str, username: str = "manager") -> None:
        self.base_url = base_url
        self.username = username
        self.http = httpx.Client(base_url=base_url, timeout=30, follow_redirects=False)
        self.http.get("/accounts/login/").raise_for_status()
        response = self.http.post(
            "/accounts/login/",
            data={"username": username, "password": DEMO_PASSWORD, "csrfmiddlewaretoken": self._csrf()},
            headers={"Referer": f"{base_url}/accounts/login/"},
        )
        assert response.status_code == 302, f"login of {username} failed: {response.status_code}"

        self.api = Client(base_url, TOKEN)

    def _csrf(self) -> str:
        return self.http.cookies["csrftoken"]

    def item_page(self, review_id: str) -> str:
        """The review's page in the inbox, once its item exists (the review's run asks right
        after the 201, so ``inbox_url`` is null at first)."""
        return wait_for(lambda: self.api.get(review_id).inbox_url, 30, f"the inbox item of {review_id}")

    def find(self, text: str) -> str:
        """The review id (the item's ``interrupt_id``) of the one pending item the inbox's search
        finds for ``text``, once it is there."""

        def found() -> str | None:
            items = self.http.get("/inbox/items.json", params={"q": text}).json()["items"]
            return items[0]["interrupt_id"] if len(items) == 1 else None

        return wait_for(found, 30, f"an item matching {text!r} in the inbox")

    def decide(self, review_id: str, action: str, **fields: Any) -> httpx.Response:
        """POST the review's item's decide form (``action`` approve / reject / revise / answer;
        ``reason``, ``feedback`` or ``f.<field>`` form values as ``fields``); the view's JSON answer."""
        path = httpx.URL(self.item_page(review_id)).path.rstrip("/") + "/decide/"
        data = {"action": action, "csrfmiddlewaretoken": self._csrf(), **{k: str(v) for k, v in fields.items()}}
        return self.http.post(
            path, data=data, headers={"Accept": "application/json", "Referer": f"{self.base_url}{path}"}
        )

    def close(self) -> None:
        self.http.close()
        self.api.close()


def webhook_secret(console: EmbeddedConsole) -> str:
    """The API client's webhook secret (``whsec_…``), which signs its reviews' callbacks."""
    code = (
        "from reviewconsole.api.models import ApiClient, hash_token\n"
        f"print(ApiClient.objects.get(token_hash=hash_token({TOKEN!r})).webhook_secret)"
    )
    return console.shell(code).split()[-1]
