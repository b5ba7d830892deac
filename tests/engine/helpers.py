"""Small helpers shared by the engine tests: run an app, read its events."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine import Commit, Event, InMemoryStore, Runner, RunResult, SessionStatus


async def start(
    app: Any,
    message: Any = "go",
    *,
    store: Any = None,
    model: Any = None,
    user_id: str = "user",
    state: dict[str, Any] | None = None,
) -> tuple[Runner, str, RunResult]:
    """A runner over a fresh store (unless given), a new session, and its first run."""
    runner = Runner(app, store if store is not None else InMemoryStore(), model=model)
    session = await runner.create_session(user_id=user_id, state=state)
    result = await runner.run(session.id, message)
    return runner, session.id, result


async def events_of(runner: Runner, session_id: str) -> list[Event]:
    """Every stored event of the session."""
    return await runner.store.list_events(session_id)


def paths(events: list[Event]) -> list[str]:
    """Node paths of the events that have one, in order, without repeats in a row."""
    out: list[str] = []
    for event in events:
        path = event.node_info.path
        if path and (not out or out[-1] != path):
            out.append(path)
    return out


def texts(events: list[Event]) -> list[str]:
    """Texts of the events that carry text."""
    return [e.text for e in events if e.text]


def calls(events: list[Event], name: str | None = None) -> list[Any]:
    """Function calls, optionally of one name."""
    return [c for e in events for c in e.function_calls() if name is None or c.name == name]


def responses(events: list[Event], name: str | None = None) -> list[Any]:
    """Function responses, optionally of one name."""
    return [r for e in events for r in e.function_responses() if name is None or r.name == name]


def outputs(events: list[Event]) -> dict[str, Any]:
    """Node path → output, for events that carry an output."""
    return {e.node_info.path: e.output for e in events if e.output is not None}


class Counts(Counter[str]):
    """Counts calls per name: ``counts.hit("draft")`` in a node, ``counts["draft"]`` in asserts."""

    def hit(self, name: str) -> None:
        self[name] += 1


class HookStore(InMemoryStore):
    """Runs ``on_pause`` (once) right after the commit that pauses the session, lease still held."""

    def __init__(self) -> None:
        super().__init__()
        self.on_pause: Any = None
        self.on_commit: Any = None

    async def commit(self, session_id: str, commit: Commit):
        record = await super().commit(session_id, commit)
        hook = self.on_commit
        if hook is not None and commit.status == SessionStatus.RUNNING and commit.opened:
            self.on_commit = None
            await hook()
        hook = self.on_pause
        if hook is not None and commit.pause:
            self.on_pause = None
            await hook()
        return record
