"""The workload and the driver interface shared by every benchmarked system.

This module is **stdlib only**: it is imported by the peer drivers running in
``bench/.peers-venv`` (LangGraph, Google ADK, Microsoft Agent Framework) and
must be importable from the project venv as well, so that our own engine can
be measured by exactly the same code.

Workload ("email review loop", after ADK's ``request_input`` sample)::

    process_input -> draft_email -> request_human_review -> handle_human_review
                         ^                                        |
                         +--------------- "revise" ---------------+
                                          "approved" -> send_email
                                          "rejected" -> reject_email

Plugging a system in
--------------------
Subclass :class:`PeerDriver` (or :class:`AsyncPeerDriver` for asyncio-only
frameworks), implement :meth:`PeerDriver.start` and :meth:`PeerDriver.resume`,
and call :func:`bench.peers.cli.run_cli` with a mapping ``variant name -> driver factory``;
:mod:`bench.peers.measure` drives it. Each metric is emitted as one JSON object per line on
stdout; diagnostics go to stderr.

Units used in record field names: ``*_ms`` milliseconds, ``*_s`` seconds,
``*_per_s`` operations per wall-clock second, ``*_bytes`` bytes.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

# --------------------------------------------------------------------------
# Workload definition
# --------------------------------------------------------------------------

WORKLOAD = "email_review_loop"
"""Identifier of the workload, copied into every record."""

SCHEMA_VERSION = 1
"""Version of the JSON record layout emitted by :func:`emit`."""

NODE_NAMES = (
    "process_input",
    "draft_email",
    "request_human_review",
    "handle_human_review",
    "send_email",
    "reject_email",
)
"""Names every implementation uses for its nodes / executors."""

APPROVE = "approve"
REJECT = "reject"
ROUTE_APPROVED = "approved"
ROUTE_REJECTED = "rejected"
ROUTE_REVISE = "revise"

SENT_MESSAGE = "Draft approved and sent successfully."
"""Final message emitted by ``send_email``."""

REJECTED_MESSAGE = "Draft rejected."
"""Final message emitted by ``reject_email``."""


def complaint_for(index: int) -> str:
    """Return the user text that starts session number ``index``."""
    return f"Order #{index} arrived two weeks late and the box was damaged."


def feedback_for(loop: int) -> str:
    """Return the reviewer's revise instruction for revise loop ``loop`` (1-based)."""
    return f"Revision {loop}: be more apologetic and offer a refund."


def draft_email_text(complaint: str, feedback: str) -> str:
    """Deterministic stand-in for the LLM call of ``draft_email``.

    No network, no sleep: a few string operations, so the "model" costs the
    same (negligible) amount in every system.
    """
    text = (
        "Dear customer,\n\n"
        f"Thank you for contacting us about: {complaint}\n"
        "We are sorry for the inconvenience and are looking into it.\n"
    )
    if feedback:
        text += f"(feedback applied: {feedback})\n"
    return text + "\nKind regards,\nCustomer Support"


def review_prompt(draft: str) -> str:
    """Message shown to the human reviewer when the workflow pauses."""
    return (
        "Please review the following draft email and answer 'approve', "
        f"'reject', or feedback to revise.\n---\n{draft}\n---"
    )


def route_for_answer(answer: str) -> str:
    """Map a reviewer answer to the route taken by ``handle_human_review``."""
    if answer == APPROVE:
        return ROUTE_APPROVED
    if answer == REJECT:
        return ROUTE_REJECTED
    return ROUTE_REVISE


# --------------------------------------------------------------------------
# Driver interface
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paused:
    """The session is waiting for a human; ``draft`` is the draft under review."""

    draft: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The session ran to the end; ``message`` is the final user-facing message."""

    message: str


Outcome = Paused | Finished


class PeerDriver(ABC):
    """One system under test in one storage variant, driven synchronously.

    Lifecycle: ``open()`` once, any number of ``start``/``resume`` calls, then
    ``close()``. Sessions are independent; the harness calls ``resume`` only
    for sessions that are paused. Anything a real client would keep between
    two HTTP requests (ADK's function-call id, MAF's request / checkpoint id)
    may be kept by the driver in a per-session dict.
    """

    system: ClassVar[str]
    """System name, e.g. ``"langgraph"``."""

    def __init__(self, variant: str) -> None:
        """Remember the variant name (e.g. ``"memory"``, ``"sqlite"``)."""
        self.variant = variant

    def open(self) -> None:  # noqa: B027 - optional hook
        """Create storage (temp dirs, connections). Called once before use."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release storage. Called once at the end."""

    @abstractmethod
    def start(self, session_id: str, complaint: str) -> Outcome:
        """Create session ``session_id`` and run it until the first pause."""

    @abstractmethod
    def resume(self, session_id: str, answer: str) -> Outcome:
        """Answer the pending review of ``session_id`` and run to the next pause or end."""

    def storage_bytes(self) -> int | None:
        """Bytes of persistent storage (files) currently used, or ``None`` if in memory."""
        return None

    def versions(self) -> dict[str, str]:
        """Versions of the packages under test, copied into every record."""
        return {}

    def notes(self) -> str:
        """Free text describing how the variant is wired (copied into records)."""
        return ""


T = TypeVar("T")


class AsyncPeerDriver(PeerDriver):
    """Adapter for asyncio-only frameworks (ADK, MAF).

    Owns one event loop for the driver's lifetime and runs each operation with
    ``loop.run_until_complete`` (tens of microseconds of overhead per call).
    Subclasses implement :meth:`astart`, :meth:`aresume` and optionally
    :meth:`aopen` / :meth:`aclose`.
    """

    def __init__(self, variant: str) -> None:
        """Create the driver; the event loop is created in :meth:`open`."""
        super().__init__(variant)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _await(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None, "driver not opened"
        return self._loop.run_until_complete(coro)

    def open(self) -> None:
        """Create the event loop and run :meth:`aopen` on it."""
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._await(self.aopen())

    def close(self) -> None:
        """Run :meth:`aclose`, then shut the event loop down."""
        if self._loop is None:
            return
        try:
            self._await(self.aclose())
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()
            self._loop = None

    async def aopen(self) -> None:
        """Async part of :meth:`open`."""

    async def aclose(self) -> None:
        """Async part of :meth:`close`."""

    @abstractmethod
    async def astart(self, session_id: str, complaint: str) -> Outcome:
        """Async :meth:`PeerDriver.start`."""

    @abstractmethod
    async def aresume(self, session_id: str, answer: str) -> Outcome:
        """Async :meth:`PeerDriver.resume`."""

    def start(self, session_id: str, complaint: str) -> Outcome:
        """Run :meth:`astart` to completion on the driver's loop."""
        return self._await(self.astart(session_id, complaint))

    def resume(self, session_id: str, answer: str) -> Outcome:
        """Run :meth:`aresume` to completion on the driver's loop."""
        return self._await(self.aresume(session_id, answer))


DriverFactory = Callable[[], PeerDriver]


# --------------------------------------------------------------------------
# Helpers for drivers
# --------------------------------------------------------------------------


def package_versions(*names: str) -> dict[str, str]:
    """Installed versions of distributions ``names`` (``"missing"`` if absent)."""
    from importlib import metadata

    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def sqlite_file_bytes(path: str | Path) -> int:
    """Size of an SQLite database in bytes after folding its WAL into the main file.

    Runs ``PRAGMA wal_checkpoint(TRUNCATE)`` on a separate connection (so call
    it only between operations), retried while another connection holds a read
    transaction (``busy``), then adds any remaining ``-wal`` / ``-journal`` file
    sizes.
    """
    path = Path(path)
    if not path.exists():
        return 0
    con = sqlite3.connect(path, timeout=5)
    try:
        for _ in range(50):
            busy, _log, _done = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                break
            time.sleep(0.01)
    finally:
        con.close()
    total = path.stat().st_size
    for suffix in ("-wal", "-journal"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            total += extra.stat().st_size
    return total


def dir_bytes(path: str | Path) -> int:
    """Total size in bytes of the regular files below ``path``."""
    total = 0
    stack = [Path(path)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


class VerificationError(AssertionError):
    """A system produced a result different from the workload's specification."""
