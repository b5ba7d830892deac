"""Clients of the scale-out stack as people and systems use it: real HTTPS, logins, CSRF, websockets."""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.scaleout.stack import Stack
from tests.scaleout.stack_parts import PASSWORD


class Reviewer:
    """A logged-in reviewer: the login form with its CSRF token, then the inbox pages and decisions."""

    def __init__(self, stack: Stack, username: str, password: str = PASSWORD) -> None:
        self.stack = stack
        self.username = username
        self.password = password
        self.http = stack.client(follow_redirects=False)

    def close(self) -> None:
        self.http.close()

    def _csrf_headers(self, path: str) -> dict[str, str]:
        # Django checks the Origin of HTTPS posts, and the token against its cookie.
        return {"Origin": self.stack.url, "Referer": self.stack.url + path, "X-CSRFToken": self.csrf_token()}

    def csrf_token(self) -> str:
        for cookie in self.http.cookies.jar:
            if cookie.name == "csrftoken":
                return str(cookie.value)
        raise AssertionError("no csrftoken cookie")

    def login(self) -> Reviewer:
        page = self.http.get("/accounts/login/")
        assert page.status_code == 200, page.status_code
        response = self.http.post(
            "/accounts/login/",
            data={"username": self.username, "password": self.password},
            headers=self._csrf_headers("/accounts/login/"),
        )
        assert response.status_code == 302, (response.status_code, response.text[:500])
        return self

    def session_cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.http.cookies.jar)

    def items(self) -> list[dict[str, Any]]:
        """The pending items of the first page, as a fresh page load shows them."""
        response = self.http.get("/inbox/items.json")
        response.raise_for_status()
        return list(response.json()["items"])

    def inbox_page(self) -> httpx.Response:
        return self.http.get("/inbox/")

    def decide(self, pk: int, action: str = "approve", feedback: str = "") -> httpx.Response:
        path = f"/inbox/items/{pk}/decide/"
        return self.http.post(path, data={"action": action, "feedback": feedback}, headers=self._csrf_headers(path))


def insecure_ssl() -> ssl.SSLContext:
    """TLS without verification: the stack's certificate is self-signed and throwaway."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class InboxSocket:
    """``/ws/inbox/`` of one reviewer, read on a thread; :attr:`messages` holds ``(time, message)``
    (``time.monotonic()`` when read). ``on_message(time, message)``, if given, is called on the
    reading thread for each message as it is read (after it is added to :attr:`messages`)."""

    def __init__(
        self,
        stack: Stack,
        reviewer: Reviewer,
        on_message: Callable[[float, dict[str, Any]], None] | None = None,
    ) -> None:
        url = stack.url.replace("https://", "wss://") + "/ws/inbox/"
        self._exit = contextlib.ExitStack()
        self.connection: ClientConnection = self._exit.enter_context(
            connect(
                url,
                ssl=insecure_ssl(),
                additional_headers={"Cookie": reviewer.session_cookie(), "Origin": stack.url},
                open_timeout=10,
            )
        )
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self.on_message = on_message
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                raw = self.connection.recv()
                seen, message = time.monotonic(), json.loads(raw)
                self.messages.append((seen, message))
                if self.on_message is not None:
                    self.on_message(seen, message)
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.closed.set()

    def close(self) -> None:
        self._exit.close()
        self._thread.join(5)
