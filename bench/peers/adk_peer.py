"""Google ADK 2.13 peer: the email review loop as a 2.x graph ``Workflow``.

Every node is a plain function node (``FunctionNode`` built from the edges);
``request_human_review`` yields a ``RequestInput``, which ADK turns into an
``adk_request_input`` function call and pauses the invocation. Resume = a user
message made only of a ``function_response`` for that call id with response
``{"result": <answer>}``; ADK rebuilds the workflow position by replaying the
session's event history (so the resume cost grows with the number of loops).

Variants:
    memory  -- ``InMemorySessionService``.
    sqlite  -- ``SqliteSessionService`` (aiosqlite) on a file in a temp dir.
               (``DatabaseSessionService`` also exists in 2.13 but needs the
               ``db`` extra, i.e. SQLAlchemy; the dedicated SQLite service is
               what ADK ships for SQLite without extras.)

One ``Runner`` per driver; every session is an ADK session created with
``create_session`` as part of "start".

Run: ``python -m bench.peers.adk_peer --sessions 20 --reps 1 --loops 1,10``.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script: make ``bench.peers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from google.adk import Event, Runner, Workflow
from google.adk.events import RequestInput
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from bench.peers import cli, common

APP_NAME = "email_review"
USER_ID = "bench-user"
REQUEST_INPUT_CALL = "adk_request_input"
"""Name of the function call ADK emits for a ``RequestInput``."""


# Function nodes: parameters other than ``node_input`` / ``ctx`` are bound from
# session state by name.


def process_input(node_input: str) -> Event:
    """Store the complaint and reset the feedback."""
    return Event(state={"complaint": node_input, "feedback": ""})


def draft_email(complaint: str, feedback: str) -> Event:
    """Deterministic fake LLM call; the draft goes to session state."""
    return Event(state={"draft": common.draft_email_text(complaint, feedback)})


def request_human_review(draft: str) -> Iterator[RequestInput]:
    """Pause for the human; the answer becomes the next node's input."""
    yield RequestInput(message=common.review_prompt(draft), payload={"draft": draft})


def handle_human_review(node_input: str) -> Event:
    """Route on the answer; any other text becomes feedback for a new draft."""
    route = common.route_for_answer(node_input)
    if route == common.ROUTE_REVISE:
        return Event(state={"feedback": node_input}, route=route)
    return Event(route=route)


def send_email() -> Event:
    """Terminal node of the approved route."""
    return Event(message=common.SENT_MESSAGE)


def reject_email() -> Event:
    """Terminal node of the rejected route."""
    return Event(message=common.REJECTED_MESSAGE)


def build_workflow() -> Workflow:
    """Build the graph workflow (nodes and routed edges)."""
    return Workflow(
        name=APP_NAME,
        edges=[
            ("START", process_input, draft_email, request_human_review, handle_human_review),
            (
                handle_human_review,
                {
                    common.ROUTE_REVISE: draft_email,
                    common.ROUTE_APPROVED: send_email,
                    common.ROUTE_REJECTED: reject_email,
                },
            ),
        ],
    )


class AdkDriver(common.AsyncPeerDriver):
    """Drives the workflow through ``Runner.run_async``; one ADK session per benchmark session."""

    system = "adk"

    def __init__(self, variant: str) -> None:
        """``variant`` is ``"memory"`` or ``"sqlite"``."""
        super().__init__(variant)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._db_path: Path | None = None
        self._sessions: BaseSessionService | None = None
        self._runner: Runner | None = None
        self._pending_call: dict[str, str] = {}
        """session id -> id of the pending ``adk_request_input`` call (client side)."""

    async def aopen(self) -> None:
        """Create the session service and the runner."""
        if importlib.util.find_spec("a2a") is None:
            # ADK's build_node() retries the failing optional RemoteA2aAgent import
            # on every node run: ~2.3x the CPU per operation in our measurements.
            print(
                "warning: a2a-sdk is not installed; ADK figures will be inflated",
                file=sys.stderr,
                flush=True,
            )
        if self.variant == "sqlite":
            self._tmp = tempfile.TemporaryDirectory(prefix="adk-bench-")
            self._db_path = Path(self._tmp.name) / "sessions.sqlite"
            self._sessions = SqliteSessionService(str(self._db_path))
        else:
            self._sessions = InMemorySessionService()
        self._runner = Runner(app_name=APP_NAME, node=build_workflow(), session_service=self._sessions)

    async def aclose(self) -> None:
        """Close the runner and delete the temp dir."""
        if self._runner is not None:
            await self._runner.close()
            self._runner = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def _invoke(self, session_id: str, message: types.Content) -> common.Outcome:
        assert self._runner is not None
        paused: common.Paused | None = None
        final_text: str | None = None
        async for event in self._runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message):
            if event.content is None or not event.content.parts:
                continue
            for part in event.content.parts:
                call = part.function_call
                if call is not None and call.name == REQUEST_INPUT_CALL:
                    self._pending_call[session_id] = str(call.id)
                    args: dict[str, Any] = call.args or {}
                    paused = common.Paused(draft=args["payload"]["draft"])
                elif part.text:
                    final_text = part.text
        if paused is not None:
            return paused
        self._pending_call.pop(session_id, None)
        return common.Finished(message=final_text or "")

    async def astart(self, session_id: str, complaint: str) -> common.Outcome:
        """Create the session, send the complaint, run until the ``RequestInput``."""
        assert self._sessions is not None
        await self._sessions.create_session(app_name=APP_NAME, user_id=USER_ID, session_id=session_id)
        return await self._invoke(session_id, types.UserContent(parts=[types.Part(text=complaint)]))

    async def aresume(self, session_id: str, answer: str) -> common.Outcome:
        """Send a message made only of the function response ``{"result": answer}``."""
        response = types.FunctionResponse(
            id=self._pending_call[session_id],
            name=REQUEST_INPUT_CALL,
            response={"result": answer},
        )
        return await self._invoke(session_id, types.UserContent(parts=[types.Part(function_response=response)]))

    def storage_bytes(self) -> int | None:
        """SQLite file size (WAL folded in); ``None`` in memory."""
        return None if self._db_path is None else common.sqlite_file_bytes(self._db_path)

    def versions(self) -> dict[str, str]:
        """Versions of ADK and the packages that change its speed."""
        return common.package_versions("google-adk", "google-genai", "a2a-sdk", "aiosqlite", "pydantic")

    def notes(self) -> str:
        """How the variant is wired."""
        store = "SqliteSessionService(file)" if self.variant == "sqlite" else "InMemorySessionService"
        a2a = "a2a-sdk installed" if importlib.util.find_spec("a2a") else "a2a-sdk MISSING"
        return f"Workflow of function nodes, Runner.run_async, {store}, {a2a}"


VARIANTS = {"memory": AdkDriver, "sqlite": AdkDriver}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (see ``--help``)."""
    return cli.run_cli(AdkDriver.system, VARIANTS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
