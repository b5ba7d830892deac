"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps every mail it accepts, and can hold the
first mail to a given address unanswered until :meth:`SmtpReceiver.release` (a sender cut off
mid-send)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from aiosmtpd.controller import Controller

from tests.scaleout.stack_parts import free_port


@dataclass
class SmtpReceiver:
    """Mails are kept in ``received`` as ``(recipients, body)``; the first one to ``hold_for`` is
    recorded in ``held`` and gets no answer until :meth:`release` (or :meth:`stop`)."""

    hold_for: str | None = None
    received: list[tuple[list[str], str]] = field(default_factory=list)
    held: list[list[str]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    controller: Controller | None = None

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd calls it by this name
        recipients = list(envelope.rcpt_tos)
        if self.hold_for in recipients and not self.held:
            self.held.append(recipients)
            await asyncio.get_running_loop().run_in_executor(None, self.released.wait)
            return "451 held by the test"
        self.received.append((recipients, envelope.content.decode("utf-8", "replace")))
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

    def count_to(self, address: str) -> int:
        """How many accepted mails went to ``address``."""
        return sum(address in recipients for recipients, _ in self.received)
