"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps every mail it accepts, and can hold the
first mail ``hold_if`` picks unanswered until :meth:`SmtpReceiver.release` (a sender cut off
mid-send)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from aiosmtpd.controller import Controller

from tests.scaleout.stack_parts import free_port


@dataclass
class SmtpReceiver:
    """Mails are kept in ``received`` as ``(recipients, content)``, the client's address and port
    of the SMTP session each came in in ``peers``; the first one for which ``hold_if(recipients,
    content)`` is true is recorded in ``held`` and gets no answer until :meth:`release` (or
    :meth:`stop`); a recipient in ``refuse`` is refused (550)."""

    hold_if: Callable[[list[str], str], bool] | None = None
    refuse: frozenset[str] = frozenset()
    received: list[tuple[list[str], str]] = field(default_factory=list)
    peers: list[tuple[str, int]] = field(default_factory=list)
    held: list[list[str]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    controller: Controller | None = None

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:  # aiosmtpd's name
        if address in self.refuse:
            return "550 refused by the test"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd calls it by this name
        recipients = list(envelope.rcpt_tos)
        content = envelope.content.decode("utf-8", "replace")
        if self.hold_if is not None and not self.held and self.hold_if(recipients, content):
            self.held.append(recipients)
            await asyncio.get_running_loop().run_in_executor(None, self.released.wait)
            return "451 held by the test"
        self.received.append((recipients, content))
        self.peers.append(tuple(session.peer))
        return "250 OK"

    def start(self) -> SmtpReceiver:
        self.controller = Controller(self, hostname="127.0.0.1", port=free_port())
        self.controller.start()
        return self

    @property
    def port(self) -> int:
        assert self.controller is not None
        return int(self.controller.port)

    def release(self) -> None:
        self.released.set()

    def stop(self) -> None:
        self.release()
        if self.controller is not None:
            self.controller.stop()

    def count_to(self, address: str, containing: str = "") -> int:
        """How many accepted mails went to ``address`` (with ``containing`` in them)."""
        return sum(address in recipients and containing in content for recipients, content in self.received)
