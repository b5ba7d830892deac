"""Compaction of an agent's context: older turns summarised, a pending call never dropped."""

from __future__ import annotations

import pytest

from engine import (
    Compaction,
    ConfigurationError,
    Content,
    FunctionCall,
    FunctionResponse,
    LlmAgent,
    LongRunningFunctionTool,
    Part,
    ScriptedModel,
    SessionStatus,
)
from tests.engine.helpers import calls, start


def text(role: str, value: str) -> Content:
    return Content(role=role, parts=[Part(text=value)])


def call(call_id: str, name: str = "tool") -> Content:
    return Content(role="model", parts=[Part(function_call=FunctionCall(id=call_id, name=name, args={}))])


def response(call_id: str, value: str, name: str = "tool") -> Content:
    return Content(
        role="user", parts=[Part(function_response=FunctionResponse(id=call_id, name=name, response={"v": value}))]
    )


def test_a_short_context_is_left_alone():
    contents = [text("user", "hi"), text("model", "hello")]
    assert Compaction(keep_recent=5).apply(contents, set()) is contents


def test_older_turns_become_one_summary_and_recent_ones_stay():
    contents = [text("user", f"message {i}") if i % 2 == 0 else text("model", f"reply {i}") for i in range(10)]
    compacted = Compaction(keep_recent=3).apply(contents, set())
    assert len(compacted) == 4
    assert compacted[0].text.startswith("Summary of the earlier conversation:\n")
    assert "user: message 0" in compacted[0].text and "assistant: reply 5" in compacted[0].text
    assert compacted[1:] == contents[-3:]


def test_a_call_and_its_response_are_never_split():
    contents = [text("user", "a"), text("model", "b"), call("c1"), response("c1", "done"), text("model", "ok")]
    compacted = Compaction(keep_recent=2).apply(contents, set())
    assert compacted[1:] == contents[2:]  # the cut moved back to keep the call with its response


def test_a_pending_call_is_kept_verbatim_however_old():
    contents = [text("user", "start"), call("slow"), response("slow", "0%")]
    contents += [text("user" if i % 2 else "model", f"turn {i}") for i in range(8)]
    compacted = Compaction(keep_recent=2).apply(contents, {"slow"})
    assert call("slow") in compacted and response("slow", "0%") in compacted
    assert compacted[0].text.startswith("Summary")
    assert "turn 0" in compacted[0].text and "start" in compacted[0].text
    # a call with no response in the context is pending too, even if no interrupt names it
    orphan = [call("open"), *[text("user", str(i)) for i in range(6)]]
    assert call("open") in Compaction(keep_recent=2).apply(orphan, set())


def test_a_custom_summarizer():
    contents = [text("user", str(i)) for i in range(6)]
    compacted = Compaction(keep_recent=2, summarize=lambda older: f"{len(older)} older messages").apply(contents, set())
    assert compacted[0].text.endswith("4 older messages")


def test_keep_recent_must_be_positive():
    with pytest.raises(ConfigurationError):
        Compaction(keep_recent=0)


async def test_a_chat_agent_with_compaction_keeps_its_pending_long_running_call_in_context():
    def export(kind: str) -> dict:
        """Export data."""
        return {"status": "pending", "progress": "0%"}

    updates = [f"{p}%" for p in range(10, 100, 10)]
    model = ScriptedModel(
        [FunctionCall(name="export", args={"kind": "csv"}), "started", *[f"at {u}" for u in updates], "done"]
    )
    agent = LlmAgent(
        "exporter", model=model, tools=[LongRunningFunctionTool(export)], compaction=Compaction(keep_recent=4)
    )
    runner, sid, result = await start(agent, "export csv")
    [fc] = calls(result.events, "export")
    for update in updates:
        result = await runner.resume(sid, {fc.id: {"status": "in-progress", "progress": update}})
        assert result.status == SessionStatus.WAITING
    result = await runner.resume(sid, {fc.id: {"status": "done"}})
    assert result.status == SessionStatus.COMPLETED
    for request in model.requests[3:]:
        sent = request.contents
        assert sent[0].text.startswith("Summary of the earlier conversation:")
        assert len(sent) <= 1 + 2 + 4  # summary, the pending call and its first response, 4 recent
        assert any(c.id == fc.id for content in sent for c in content.function_calls())
    assert len(model.requests[-1].contents) < len(await runner.store.list_events(sid))
