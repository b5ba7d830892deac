"""Approvals bound to the exact call (engine/_digest.py): digests, edited arguments, drift, batches."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine import (
    AnswerInvalidError,
    ArgsChangedError,
    Content,
    FunctionCall,
    FunctionTool,
    InMemoryStore,
    LlmAgent,
    LongRunningFunctionTool,
    Part,
    ScriptedModel,
    SessionStatus,
    args_digest,
)
from tests.engine.helpers import Counts, calls, responses, start


def call(name: str, **args) -> FunctionCall:
    return FunctionCall(name=name, args=args)


def refunding_agent(model, counts: Counts, seen: list | None = None) -> LlmAgent:
    def refund(order: str, amount: int) -> dict:
        """Refund an order."""
        counts.hit(order)
        if seen is not None:
            seen.append({"order": order, "amount": amount})
        return {"refunded": order, "amount": amount}

    return LlmAgent("agent", model=model, tools=[FunctionTool(refund, require_confirmation=True)])


def test_the_digest_is_sha256_over_canonical_json_of_name_and_args():
    canonical = '{"args":{"amount":5,"order":"A"},"name":"refund"}'
    assert args_digest("refund", {"order": "A", "amount": 5}) == hashlib.sha256(canonical.encode()).hexdigest()
    assert args_digest("refund", {"amount": 5, "order": "A"}) == args_digest("refund", {"order": "A", "amount": 5})
    assert args_digest("refund", {"order": "A", "amount": 6}) != args_digest("refund", {"order": "A", "amount": 5})


async def test_a_confirmation_carries_the_digest_in_its_record_not_in_adk_events():
    model = ScriptedModel([call("refund", order="A", amount=5), "ok"])
    runner, sid, result = await start(refunding_agent(model, Counts()), "x")
    [record] = await runner.store.pending_interrupts(sid)
    assert record.args_digest == args_digest("refund", {"order": "A", "amount": 5})
    assert record.metadata["args_schema"]["required"] == ["order", "amount"]
    assert record.args_digest not in json.dumps([e.to_json() for e in result.events])


async def test_a_long_running_tool_carries_the_digest_and_a_wrong_one_is_refused():
    def ask_for_approval(amount: int) -> dict:
        """Ask a manager."""
        return {"status": "pending"}

    model = ScriptedModel([call("ask_for_approval", amount=500), "Waiting for a manager.", "done"])
    agent = LlmAgent("agent", model=model, tools=[LongRunningFunctionTool(ask_for_approval)])
    runner, sid, _ = await start(agent, "x")
    [record] = await runner.store.pending_interrupts(sid)
    assert record.args_digest == args_digest("ask_for_approval", {"amount": 500})
    with pytest.raises(ArgsChangedError):
        await runner.submit(sid, {record.id: {"status": "approved", "args_digest": "0" * 64}})
    answer = {"status": "approved", "args_digest": record.args_digest}
    result = await runner.resume(sid, {record.id: answer})
    assert result.status == SessionStatus.COMPLETED


async def test_an_approval_of_changed_arguments_is_refused():
    counts = Counts()
    model = ScriptedModel([call("refund", order="A", amount=5), "ok"])
    runner, sid, _ = await start(refunding_agent(model, counts), "x")
    [record] = await runner.store.pending_interrupts(sid)
    shown = args_digest("refund", {"order": "A", "amount": 5000})  # what a tampered page showed
    with pytest.raises(ArgsChangedError) as refused:
        await runner.submit(sid, {record.id: {"confirmed": True, "args_digest": shown}})
    assert refused.value.details["expected"] == record.args_digest
    assert [r.id for r in await runner.store.pending_interrupts(sid)] == [record.id]  # nothing stored
    result = await runner.resume(sid, {record.id: {"confirmed": True, "args_digest": record.args_digest}})
    assert result.status == SessionStatus.COMPLETED
    assert counts["A"] == 1


async def test_approved_arguments_cannot_drift_on_replay():
    """An approval stored for refund(A, 5), then the checkpoint's call drifts to 5000 before the
    run applies it (a replay of an altered checkpoint): the tool never runs with 5000."""
    counts, seen = Counts(), []
    model = ScriptedModel([call("refund", order="A", amount=5), "ok"])
    store = InMemoryStore()
    runner, sid, _ = await start(refunding_agent(model, counts, seen), "x", store=store)
    [record] = await store.pending_interrupts(sid)
    await runner.submit(sid, {record.id: {"confirmed": True, "args_digest": record.args_digest}})
    mem = store._sessions[sid]
    assert '"amount":5}' in mem.checkpoint
    mem.checkpoint = mem.checkpoint.replace('"amount":5}', '"amount":5000}')
    result = await runner.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED
    assert seen == []
    [response] = responses(result.events, "refund")
    assert "not the ones that were approved" in response.response["error"]


async def test_edited_arguments_are_validated_get_their_own_digest_and_are_exactly_what_runs():
    counts, seen = Counts(), []
    model = ScriptedModel([call("refund", order="A", amount=500), "ok"])
    runner, sid, _ = await start(refunding_agent(model, counts, seen), "x")
    [record] = await runner.store.pending_interrupts(sid)
    with pytest.raises(AnswerInvalidError) as refused:
        await runner.submit(sid, {record.id: {"confirmed": True, "args": {"order": "A", "amount": "lots"}}})
    assert refused.value.details["errors"][0]["path"] == ["args", "amount"]
    edited = {"order": "A", "amount": 50}
    [answered] = await runner.submit(sid, {record.id: {"confirmed": True, "args": edited}})
    result = await runner.run_pending(sid)
    assert result.status == SessionStatus.COMPLETED
    assert seen == [edited]
    assert responses(result.events, "refund")[-1].response == {"refunded": "A", "amount": 50}
    resolved = await runner.store.get_interrupt(sid, answered.id)
    assert resolved.response["args_digest"] == record.args_digest
    assert resolved.response["edited_args_digest"] == args_digest("refund", edited)


async def test_approve_and_reject_in_one_batch_each_take_effect():
    """Two calls needing approval in one model turn, answered in one resume: approve A, reject B."""
    counts = Counts()
    parts = [Part(function_call=call("refund", order=o, amount=n)) for o, n in [("A", 5), ("B", 7)]]
    turn = Content(role="model", parts=parts)
    model = ScriptedModel([turn, "Done."])
    runner, sid, result = await start(refunding_agent(model, counts), "x")
    asks = calls(result.events, "adk_request_confirmation")
    by_order = {a.args["originalFunctionCall"]["args"]["order"]: a.id for a in asks}
    assert sorted(by_order) == ["A", "B"]
    result = await runner.resume(sid, {by_order["A"]: {"confirmed": True}, by_order["B"]: {"confirmed": False}})
    assert result.status == SessionStatus.COMPLETED
    assert counts == {"A": 1}
    [batch] = [e for e in result.events if len(e.function_responses()) == 2]
    assert [r.response for r in batch.function_responses()] == [
        {"refunded": "A", "amount": 5},
        {"error": "This tool call is rejected."},
    ]
    assert model.calls == 2  # one model turn on both responses
    assert await runner.store.pending_interrupts(sid) == []
