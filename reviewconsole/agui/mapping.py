"""Engine events and node runs as AG-UI 1.0 events (``ag_ui.core`` models, never hand-written dicts).

:class:`EventMapper` is a :class:`engine.RunListener`; what it maps waits in :attr:`EventMapper.out`
for the stream to send. The mapping (AG-UI 1.0 §Events):

| engine | AG-UI |
|---|---|
| a node run starts / ends (listener) | STEP_STARTED / STEP_FINISHED, ``stepName`` = the node path |
| partial model event (streamed text delta) | TEXT_MESSAGE_START (first delta), TEXT_MESSAGE_CONTENT |
| event with text (agent reply, node message) | TEXT_MESSAGE_END after streamed deltas, else START/CONTENT/END |
| model function call (a tool call) | TOOL_CALL_START, TOOL_CALL_ARGS (JSON text), TOOL_CALL_END |
| tool's function response | TOOL_CALL_RESULT (``role: tool``) |
| a long-running tool's late result (a user function response) | TOOL_CALL_RESULT for the same call |
| ``actions.stateDelta`` (session keys) | STATE_DELTA (RFC 6902, computed with ``jsonpatch``) |

Left out: ``adk_request_input`` / ``adk_request_confirmation`` calls (they are interrupts: CUSTOM
``request_info`` and the RUN_FINISHED interrupt outcome say them), the placeholder response of a
call waiting for approval (its real result comes in the run that resumes it: rule 7), user
messages (the client sent them), and ``app:``, ``user:`` and ``temp:`` state keys (not this
session's). Text messages are closed when their node run ends and by :meth:`close_all`.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import jsonpatch
from ag_ui.core import (
    BaseEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from engine import Event
from engine._events import REQUEST_CONFIRMATION_FUNCTION, REQUEST_INPUT_FUNCTION

__all__ = ["EventMapper", "session_keys"]

INTERRUPT_CALLS = frozenset({REQUEST_INPUT_FUNCTION, REQUEST_CONFIRMATION_FUNCTION})
SHARED_PREFIXES = ("app:", "user:", "temp:")


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def session_keys(state: dict[str, Any]) -> dict[str, Any]:
    """The session's own state keys as plain JSON (no ``app:``, ``user:`` or ``temp:`` keys)."""
    return _json({k: v for k, v in state.items() if not k.startswith(SHARED_PREFIXES)})


class EventMapper:
    """Maps one run (see the module docstring); ``state`` is the session state the client has.

    With ``track_state=False`` (catching up on stored events) state deltas are skipped: the
    caller sends a STATE_SNAPSHOT afterwards.
    """

    def __init__(self, state: dict[str, Any] | None = None, *, track_state: bool = True) -> None:
        self.state = session_keys(state or {})
        self.track_state = track_state
        self.out: list[BaseEvent] = []
        self._messages: dict[str, str] = {}  # open text message id → node path
        self._steps: list[str] = []

    # -- engine.RunListener ------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        self.out.extend(self.map_event(event))

    def on_node_start(self, path: str, name: str) -> None:
        if path not in self._steps:
            self._steps.append(path)
            self.out.append(StepStartedEvent(step_name=path))

    def on_node_end(self, path: str, status: str) -> None:
        for message_id in [m for m, p in self._messages.items() if p == path]:
            self.out.append(self._end_message(message_id))
        if path in self._steps:
            self._steps.remove(path)
            self.out.append(StepFinishedEvent(step_name=path))

    # -- mapping -----------------------------------------------------------------------------

    def snapshot(self) -> StateSnapshotEvent:
        """STATE_SNAPSHOT of the state the mapper holds."""
        return StateSnapshotEvent(snapshot=copy.deepcopy(self.state))

    def map_event(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for one engine event (partial or complete)."""
        if event.partial:
            return self._delta(event)
        out: list[BaseEvent] = []
        if event.author == "user":
            out.extend(self._late_results(event))
        else:
            out.extend(self._content(event))
        if self.track_state and event.state_delta:
            out.extend(self._state(event.state_delta))
        return out

    def replay(self, events: list[Event]) -> list[BaseEvent]:
        """Stored events (caught up on a later request), each node path as one step."""
        out: list[BaseEvent] = []
        for event in events:
            path = event.node_info.path
            if path and path not in self._steps:
                self.close_steps()
                self.on_node_start(path, path)
            self.on_event(event)
        self.close_all()
        out, self.out = self.out, []
        return out

    def close_steps(self) -> None:
        for path in list(reversed(self._steps)):
            self.on_node_end(path, "completed")

    def close_all(self) -> None:
        """Close every open text message and step (RUN_FINISHED may not follow open ones)."""
        for message_id in list(self._messages):
            self.out.append(self._end_message(message_id))
        self.close_steps()

    def drain(self) -> list[BaseEvent]:
        """The events mapped so far, once."""
        out, self.out = self.out, []
        return out

    # -- pieces ------------------------------------------------------------------------------

    def on_delta(self, message_id: str, path: str, text: str) -> None:
        """A streamed text delta of event ``message_id`` at node ``path`` (a partial event's parts)."""
        self.out.extend(self._text_delta(message_id, path, text))

    def _delta(self, event: Event) -> list[BaseEvent]:
        return self._text_delta(event.id, event.node_info.path, event.text) if event.text else []

    def _text_delta(self, message_id: str, path: str, text: str) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if message_id not in self._messages:
            self._messages[message_id] = path
            out.append(TextMessageStartEvent(message_id=message_id, role="assistant"))
        out.append(TextMessageContentEvent(message_id=message_id, delta=text))
        return out

    def _end_message(self, message_id: str) -> TextMessageEndEvent:
        self._messages.pop(message_id, None)
        return TextMessageEndEvent(message_id=message_id)

    def _content(self, event: Event) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if event.id in self._messages:
            out.append(self._end_message(event.id))
        elif event.text:
            out.append(TextMessageStartEvent(message_id=event.id, role="assistant"))
            out.append(TextMessageContentEvent(message_id=event.id, delta=event.text))
            out.append(TextMessageEndEvent(message_id=event.id))
        for call in event.function_calls():
            if call.name in INTERRUPT_CALLS or not call.id:
                continue
            out.append(ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name, parent_message_id=event.id))
            out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=json.dumps(_json(call.args))))
            out.append(ToolCallEndEvent(tool_call_id=call.id))
        awaiting = event.actions.requested_tool_confirmations if event.actions else {}
        for response in event.function_responses():
            if response.name in INTERRUPT_CALLS or not response.id or response.id in awaiting:
                continue
            out.append(self._result(response.id, response.response))
        return out

    def _late_results(self, event: Event) -> list[BaseEvent]:
        return [
            self._result(r.id, r.response) for r in event.function_responses() if r.id and r.name not in INTERRUPT_CALLS
        ]

    @staticmethod
    def _result(call_id: str, response: dict[str, Any]) -> ToolCallResultEvent:
        return ToolCallResultEvent(
            message_id=f"result-{uuid.uuid4().hex}",
            tool_call_id=call_id,
            content=json.dumps(_json(response)),
            role="tool",
        )

    def _state(self, delta: dict[str, Any]) -> list[BaseEvent]:
        after = copy.deepcopy(self.state)
        after.update(session_keys(delta))
        patch = jsonpatch.make_patch(self.state, after).patch
        self.state = after
        return [StateDeltaEvent(delta=patch)] if patch else []
