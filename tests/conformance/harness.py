"""Replay ADK session traces through our engine and compare the events as ADK's runner does.

The traces are ADK's sample fixtures in ``../shared/conformance/adk`` (16) and ``adk-extra`` (20),
one format (``adk/TRACE-FORMAT.md``) and one comparison for all of them.

Usable as a library::

    trace = load_trace(SHARED / "conformance/adk/request_input/phone_broke.json")
    events = await replay(trace, lambda model: build_workflow(model))
    assert_matches(trace, events)

What it does (``../shared/conformance/adk/TRACE-FORMAT.md``, ADK's ``cli/agent_test_runner.py``):

1. Scripts the model from the trace's ``role: model`` events in file order, skipping confirmation
   and credential requests, workflow interrupts (``adk_request_input`` below the root) and the
   turn after a ``set_model_response`` response.
2. Runs turn 1 with the text of event 0, then feeds every later user event with an empty node path
   as the next turn; recorded function-call ids map to live ones by position, and an answer whose
   id cannot be mapped is recorded but not sent.
3. Normalises both sides (ids renumbered ``fc-N`` in order of appearance, response ids reassigned
   by call name first in first out, volatile fields dropped, empty containers dropped) and compares
   them as multisets sorted by (author, node path, canonical JSON).

On top of ADK's check, :func:`assert_matches` also asserts the order of events within each node
run, and that every event of the session belongs to one invocation.
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine import BaseNode, Content, Event, InMemoryStore, Runner, ScriptedModel

__all__ = [
    "EXTRA_TRACES",
    "REQUIRED_ENV",
    "SHARED",
    "TRACES",
    "Trace",
    "assert_matches",
    "load_trace",
    "normalize",
    "replay",
    "require_traces",
    "scripted_responses",
]

SHARED = Path(os.environ.get("REVIEWCONSOLE_SHARED") or Path(__file__).resolve().parents[2].parent / "shared")
"""``../shared`` beside the clone; ``REVIEWCONSOLE_SHARED`` names another place (e.g. for a git worktree)."""
TRACES = SHARED / "conformance" / "adk"
EXTRA_TRACES = SHARED / "conformance" / "adk-extra"
"""The 20 further sample traces (``adk-extra/README.md``); same format, same comparison."""
REQUIRED_ENV = "REVIEWCONSOLE_CONFORMANCE_REQUIRED"
"""Set to ``1`` (``.ci/run`` does) and missing traces fail the run instead of skipping."""

_EXCLUDED = {
    "id",
    "timestamp",
    "invocationId",
    "modelVersion",
    "finishReason",
    "usageMetadata",
    "avgLogprobs",
    "cacheMetadata",
    "logprobsResult",
    "citationMetadata",
    "interactionId",
    "turnComplete",
}
_HITL_CALLS = {"adk_request_input", "adk_request_confirmation", "adk_request_credential"}


@dataclass
class Trace:
    """One fixture: its events (dicts, camelCase) and the ``mocks`` for ``random``."""

    path: Path
    events: list[dict[str, Any]]
    mocks: dict[str, list[Any]]

    @property
    def first_message(self) -> str:
        parts = self.events[0].get("content", {}).get("parts", [])
        return parts[0]["text"] if parts and "text" in parts[0] else ""

    @property
    def expected(self) -> list[dict[str, Any]]:
        return self.events[1:]


def require_traces(traces: Path = TRACES) -> None:
    """Skip the calling test when the ADK traces are not checked out beside the clone
    (``../shared/conformance/adk``), naming the folder; with ``REVIEWCONSOLE_CONFORMANCE_REQUIRED=1``
    fail instead, so that CI, which always has ``../shared``, proves the traces replay."""
    if traces.is_dir():
        return
    reason = (
        f"ADK conformance traces not found: {traces} is missing (they come from the sibling folder "
        f"../shared/ beside the clone; {REQUIRED_ENV}=1 makes this a failure)"
    )
    if os.environ.get(REQUIRED_ENV) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def load_trace(path: Path | str) -> Trace:
    """Read a trace file (relative paths are taken under ``shared/conformance/``, when they start
    with ``adk/`` or ``adk-extra/``, else under ``shared/conformance/adk``)."""
    path = Path(path)
    if not path.is_absolute():
        path = SHARED / "conformance" / path if path.parts[0] in ("adk", "adk-extra") else TRACES / path
    data = json.loads(path.read_text(encoding="utf-8"))
    return Trace(path=path, events=data["events"], mocks=data.get("mocks", {}))


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content")
    return content.get("parts", []) if isinstance(content, dict) else []


def scripted_responses(trace: Trace) -> list[Content]:
    """The model's canned outputs, in order, with ADK's skip rules."""
    responses: list[Content] = []
    after_set_model_response = False
    for event in trace.expected:
        content = event.get("content")
        if not isinstance(content, dict):
            continue
        role = content.get("role")
        if role == "user":
            for part in content.get("parts", []):
                if part.get("functionResponse", {}).get("name") == "set_model_response":
                    after_set_model_response = True
        elif role == "model":
            if after_set_model_response:
                after_set_model_response = False
                continue
            path = event.get("nodeInfo", {}).get("path", "")
            skip = False
            for part in content.get("parts", []):
                name = part.get("functionCall", {}).get("name")
                if name in ("adk_request_confirmation", "adk_request_credential"):
                    skip = True
                if name == "adk_request_input" and "/" in path:
                    skip = True
            if not skip:
                responses.append(Content.model_validate(content))
    return responses


def _function_call_ids(events: list[dict[str, Any]]) -> list[str]:
    return [p["functionCall"]["id"] for e in events for p in _parts(e) if "id" in p.get("functionCall", {})]


@contextmanager
def _random_mocks(mocks: dict[str, list[Any]]) -> Iterator[None]:
    saved = random.random, random.randint
    randoms = list(mocks.get("random.random", []))
    randints = list(mocks.get("random.randint", []))
    if "random.random" in mocks:
        random.random = lambda: randoms.pop(0) if randoms else 0.8  # type: ignore[assignment]
    if "random.randint" in mocks:
        random.randint = lambda a, b: randints.pop(0) if randints else b  # type: ignore[assignment]
    if not mocks:
        random.seed(42)
    try:
        yield
    finally:
        random.random, random.randint = saved  # type: ignore[assignment]


async def replay(
    trace: Trace,
    build: Callable[[ScriptedModel], BaseNode],
    *,
    store: InMemoryStore | None = None,
    responses: list[Content] | None = None,
    ids_in_time_order: bool = False,
) -> tuple[list[Event], ScriptedModel]:
    """Run the trace's turns through ``build(model)``; return the stored events and the model.

    ``responses`` overrides the model script taken from the trace. ``ids_in_time_order`` maps
    recorded call ids by their ``fc-N`` number rather than file position (for a trace whose
    events are out of time order).
    """
    model = ScriptedModel(responses if responses is not None else scripted_responses(trace))
    runner = Runner(build(model), store if store is not None else InMemoryStore(), model=model)
    session = await runner.create_session(user_id="user")
    recorded_ids = _function_call_ids(trace.events)
    if ids_in_time_order:
        recorded_ids.sort(key=lambda i: int(i.rsplit("-", 1)[1]))
    mapping: dict[str, str] = {}

    def learn(events: list[Event]) -> None:
        for event in events:
            for call in event.function_calls():
                if len(mapping) < len(recorded_ids) and call.id:
                    mapping[recorded_ids[len(mapping)]] = call.id

    with _random_mocks(trace.mocks):
        result = await runner.run(session.id, trace.first_message)
        learn(result.events)
        for event in trace.expected:
            if event.get("author") != "user" or event.get("nodeInfo", {}).get("path"):
                continue
            content = Content.model_validate(copy.deepcopy(event.get("content", {})))
            content.role = "user"
            responses = content.function_responses()
            if responses:
                if any(r.id and r.id not in mapping for r in responses):
                    continue
                for response in responses:
                    if response.id:
                        response.id = mapping[response.id]
                result = await runner.resume(session.id, content)
            else:
                result = await runner.run(session.id, content)
            learn(result.events)
    return await runner.store.list_events(session.id), model


def _remap_path(path: str, ids: dict[str, str]) -> str:
    out = []
    for segment in path.split("/"):
        name, _, run = segment.partition("@")
        out.append(f"{name}@{ids[run]}" if run in ids else segment)
    return "/".join(out)


def _remap_nested_ids(value: Any, ids: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, item in list(value.items()):
            if key == "id" and isinstance(item, str) and item in ids:
                value[key] = ids[item]
            else:
                _remap_nested_ids(item, ids)
    elif isinstance(value, list):
        for item in value:
            _remap_nested_ids(item, ids)


def _renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events = [copy.deepcopy(e) for e in events if not e.get("partial")]
    ids: dict[str, str] = {}
    for event in events:
        for part in _parts(event):
            call = part.get("functionCall")
            if call is None:
                continue
            old = call.get("id")
            new = f"fc-{len(ids) + 1}"
            ids[old] = new
            call["id"] = new
            if event.get("longRunningToolIds"):
                event["longRunningToolIds"] = [new if t == old else t for t in event["longRunningToolIds"]]
            for key, value in list(call.get("args", {}).items()):
                if value == old:
                    call["args"][key] = new
    by_name: dict[str, list[str]] = {}
    for event in events:
        for part in _parts(event):
            if "functionCall" in part:
                by_name.setdefault(part["functionCall"]["name"], []).append(part["functionCall"]["id"])
        if event.get("branch"):
            event["branch"] = ".".join(_remap_path(seg, ids) for seg in event["branch"].split("."))
        if event.get("isolationScope") in ids:
            event["isolationScope"] = ids[event["isolationScope"]]
        info = event.get("nodeInfo", {})
        if info.get("path"):
            info["path"] = _remap_path(info["path"], ids)
        if info.get("outputFor"):
            info["outputFor"] = [_remap_path(p, ids) for p in info["outputFor"]]
        for part in _parts(event):
            response = part.get("functionResponse")
            if response is not None:
                queue = by_name.get(response["name"])
                if queue:
                    response["id"] = queue.pop(0)
                elif response.get("id") in ids:
                    response["id"] = ids[response["id"]]
            if "functionCall" in part:
                _remap_nested_ids(part["functionCall"].get("args"), ids)
        confirmations = event.get("actions", {}).get("requestedToolConfirmations")
        if confirmations:
            event["actions"]["requestedToolConfirmations"] = {ids.get(k, k): v for k, v in confirmations.items()}
    return events


def normalize(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ADK's ``normalize_events`` on event dicts (without the id renumbering)."""
    out = []
    for raw in events:
        event = {k: v for k, v in raw.items() if k not in _EXCLUDED and v is not None}
        content = event.get("content")
        if isinstance(content, dict):
            for part in content.get("parts", []):
                part.pop("thoughtSignature", None)
            if any(p.get("functionCall", {}).get("name") in _HITL_CALLS for p in content.get("parts", [])):
                content.pop("role", None)
        if "longRunningToolIds" in event:
            if event["longRunningToolIds"]:
                event["longRunningToolIds"] = sorted(event["longRunningToolIds"])
            else:
                del event["longRunningToolIds"]
        actions = event.get("actions")
        if isinstance(actions, dict):
            for key in [k for k, v in actions.items() if v == {}]:
                del actions[key]
            for key in [k for k in actions.get("stateDelta", {}) if k.endswith("_join_state")]:
                del actions["stateDelta"][key]
            if not actions:
                del event["actions"]
        out.append(event)
    return out


def _sort_key(event: dict[str, Any]) -> tuple[str, str, str]:
    return (event.get("author", ""), event.get("nodeInfo", {}).get("path", ""), json.dumps(event, sort_keys=True))


def comparable(trace: Trace, live: list[Event]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(actual, expected) after normalisation, each sorted as ADK's runner sorts them."""
    actual = normalize(_renumber([e.to_json() for e in live[1:]]))
    expected = normalize([copy.deepcopy(e) for e in trace.expected])
    return sorted(actual, key=_sort_key), sorted(expected, key=_sort_key)


def assert_matches(trace: Trace, live: list[Event], *, check_order: bool = True) -> None:
    """Assert ADK's multiset equality, then per-node order and a single invocation."""
    actual, expected = comparable(trace, live)
    if actual != expected:
        raise AssertionError(_diff(actual, expected))
    if check_order:
        live_norm = normalize(_renumber([e.to_json() for e in live[1:]]))
        expected_norm = normalize([copy.deepcopy(e) for e in trace.expected])
        for path in {e.get("nodeInfo", {}).get("path", "") for e in expected_norm} - {""}:
            got = [e for e in live_norm if e.get("nodeInfo", {}).get("path") == path]
            want = [e for e in expected_norm if e.get("nodeInfo", {}).get("path") == path]
            assert got == want, f"events of node {path} are out of order:\n{got}\n!=\n{want}"
    invocations = {e.invocation_id for e in live}
    assert len(invocations) == 1, f"the session spans {len(invocations)} invocations"


def _diff(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str:
    a = [json.dumps(e, sort_keys=True) for e in actual]
    b = [json.dumps(e, sort_keys=True) for e in expected]
    missing = [e for e in b if e not in a]
    extra = [e for e in a if e not in b]
    return (
        "live events differ from the trace\n  missing:\n    "
        + "\n    ".join(missing)
        + "\n  unexpected:\n    "
        + "\n    ".join(extra)
    )
