"""Model failures are retried with back-off, then fail the session; a failed session is retried.

Each failure kind runs against the real local HTTP server (``openai_server.FakeOpenAI``). The
back-off's sleep is a recorder: the tests assert the delays asked for and never wait on a timer.
"""

from __future__ import annotations

import logging
import socket

import pytest
from pydantic import BaseModel

from engine import (
    RETRY_KEY,
    START,
    Content,
    InMemoryStore,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    ModelError,
    ModelRetry,
    ModelRouter,
    Part,
    RequestInput,
    RetryingModel,
    Runner,
    ScriptedModel,
    SessionNotFailedError,
    SessionStatus,
    Workflow,
    node,
)
from engine.openai_model import OpenAIModel
from tests.engine.openai_server import FakeOpenAI

KEY = "sk-test-SECRET-4242"


class Grade(BaseModel):
    grade: str


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


class Sleeps(list):
    """Records each delay the back-off asks for, and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def retrying(base_url: str, sleeps: Sleeps, *, attempts: int = 3, timeout: float = 5.0) -> RetryingModel:
    backend = OpenAIModel(base_url, KEY, "local-model", timeout=timeout, stream=False)
    return RetryingModel(backend, ModelRetry(attempts=attempts, initial_delay=0.5, multiplier=2.0), sleep=sleeps)


def request(**options) -> LlmRequest:
    return LlmRequest(agent_name="a", instruction="Be brief.", contents=[Content.user_text("hi")], **options)


async def final(model, req: LlmRequest) -> Content:
    return [r async for r in model.generate(req) if not r.partial][-1].content


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_connection_refused_is_retried_with_back_off_then_fails():
    sleeps = Sleeps()
    with pytest.raises(ModelError) as info:
        await final(retrying(closed_port_url(), sleeps), request())
    assert info.value.details == {"kind": "connection", "attempts": 3}
    assert sleeps == [0.5, 1.0]
    assert "could not be reached" in info.value.message


async def test_a_timeout_is_retried_then_fails(server):
    server.replies.extend([{"hang": True}] * 2)
    sleeps = Sleeps()
    with pytest.raises(ModelError) as info:
        await final(retrying(server.base_url, sleeps, attempts=2, timeout=0.05), request())
    assert info.value.details["kind"] == "timeout"
    assert info.value.details["attempts"] == 2
    assert len(server.requests) == 2
    assert sleeps == [0.5]


async def test_a_429_waits_as_long_as_retry_after_says(server):
    server.replies.append({"status": 429, "error": "slow down", "headers": {"Retry-After": "7"}})
    server.replies.append({"text": "Fine."})
    sleeps = Sleeps()
    content = await final(retrying(server.base_url, sleeps), request())
    assert content.text == "Fine."
    assert sleeps == [7.0]
    assert len(server.requests) == 2


async def test_retry_after_ms_and_the_cap_on_retry_after(server):
    server.replies.append({"status": 429, "error": "slow", "headers": {"retry-after-ms": "20"}})
    server.replies.append({"status": 429, "error": "slow", "headers": {"Retry-After": "3600"}})
    server.replies.append({"text": "ok"})
    sleeps = Sleeps()
    model = retrying(server.base_url, sleeps)
    model.retry = ModelRetry(attempts=3, max_retry_after=30.0)
    assert (await final(model, request())).text == "ok"
    assert sleeps == [0.02, 30.0]


async def test_5xx_is_retried_until_it_succeeds(server):
    server.replies.extend([{"status": 503, "error": "busy"}, {"status": 500, "error": "oops"}, {"text": "Done."}])
    sleeps = Sleeps()
    assert (await final(retrying(server.base_url, sleeps), request())).text == "Done."
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


async def test_5xx_every_time_fails_with_the_status_and_the_count(server):
    server.replies.extend([{"status": 502, "error": "bad gateway"}] * 3)
    with pytest.raises(ModelError) as info:
        await final(retrying(server.base_url, Sleeps()), request())
    assert info.value.details == {"kind": "server_error", "status_code": 502, "attempts": 3}
    assert len(server.requests) == 3


async def test_a_client_error_is_not_retried(server):
    server.replies.append({"status": 401, "error": "bad key"})
    sleeps = Sleeps()
    with pytest.raises(ModelError) as info:
        await final(retrying(server.base_url, sleeps), request())
    assert info.value.details["kind"] == "refused"
    assert info.value.details["status_code"] == 401
    assert len(server.requests) == 1
    assert sleeps == []


LOOKUP = {"name": "lookup", "description": "", "parameters": {"type": "object", "properties": {}}}


async def test_a_malformed_tool_call_is_asked_again(server):
    server.replies.append({"tool_calls": [{"name": "lookup", "raw_arguments": '{"id": 1'}]})
    server.replies.append({"tool_calls": [{"name": "no_such_tool", "arguments": {}}]})
    server.replies.append({"tool_calls": [{"name": "lookup", "arguments": {"id": 1}}]})
    sleeps = Sleeps()
    content = await final(retrying(server.base_url, sleeps), request(tools=[LOOKUP]))
    [call] = content.function_calls()
    assert (call.name, call.args) == ("lookup", {"id": 1})
    assert len(server.requests) == 3
    assert len(sleeps) == 2


async def test_a_malformed_tool_call_every_time_fails(server):
    server.replies.extend([{"tool_calls": [{"name": "lookup", "raw_arguments": "nope"}]}] * 2)
    with pytest.raises(ModelError) as info:
        await final(retrying(server.base_url, Sleeps(), attempts=2), request(tools=[LOOKUP]))
    assert info.value.details == {"kind": "malformed_tool_call", "attempts": 2}
    assert "malformed tool call" in info.value.message


async def test_json_that_fails_the_output_schema_is_asked_again(server):
    schema = Grade.model_json_schema()
    server.replies.extend([{"text": "A, I think"}, {"text": '{"grade": 5}'}, {"text": '```json\n{"grade": "A"}\n```'}])
    sleeps = Sleeps()
    content = await final(retrying(server.base_url, sleeps), request(output_schema=schema))
    assert content.text.endswith("```")
    assert len(server.requests) == 3
    assert len(sleeps) == 2


async def test_json_that_fails_the_output_schema_every_time_fails(server):
    server.replies.extend([{"text": '{"grade": 5}'}] * 3)
    with pytest.raises(ModelError) as info:
        await final(retrying(server.base_url, Sleeps()), request(output_schema=Grade.model_json_schema()))
    assert info.value.details == {"kind": "output_schema", "attempts": 3}


async def test_no_key_in_the_error_its_repr_or_the_logs_even_when_the_server_echoes_it(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.replies.extend([{"status": 500, "error": "boom", "echo_authorization": True}] * 3)
    model = retrying(server.base_url, Sleeps())
    runner = Runner(Workflow("wf", edges=[(START, LlmAgent("writer", model=model))]), InMemoryStore())
    session = await runner.create_session()
    result = await runner.run(session.id, "write")
    assert result.status == SessionStatus.FAILED
    assert KEY in server.requests[0]["headers"]["authorization"]  # it was sent, and echoed back
    events = await runner.store.list_events(session.id)
    stored = repr(result.session.error) + "".join(e.model_dump_json() for e in events)
    assert KEY not in stored
    assert KEY not in repr(model) and KEY not in repr(model.model)
    assert KEY not in caplog.text
    assert "after 3 attempts" in result.session.error["message"]


# -- routing ------------------------------------------------------------------------------


async def test_the_router_sends_each_agent_to_its_model():
    default, special = ScriptedModel(["from default"]), ScriptedModel(["from special"])
    router = ModelRouter(default, {"b": special})
    wf = Workflow("wf", edges=[(START, LlmAgent("a")), ("a", LlmAgent("b"))])
    runner = Runner(wf, InMemoryStore(), model=router)
    session = await runner.create_session()
    result = await runner.run(session.id, "go")
    assert result.output == "from special"
    assert [r.agent_name for r in default.requests] == ["a"]
    assert [r.agent_name for r in special.requests] == ["b"]
    assert router.name == default.name


# -- retrying a failed session --------------------------------------------------------------


class FailsThenAnswers:
    """A model that fails its first ``failures`` calls (not retried) and then answers."""

    name = "flaky"
    offline = True

    def __init__(self, failures: int, answer: str = "Answered.") -> None:
        self.failures, self.answer, self.calls = failures, answer, 0

    async def generate(self, request: LlmRequest):
        self.calls += 1
        if self.calls <= self.failures:
            raise ModelError("The model's server refused.", kind="refused", status_code=400)
        yield LlmResponse(Content(role="model", parts=[Part(text=self.answer)]))


async def test_a_failed_session_is_retried_from_its_last_checkpoint():
    ran = []

    @node
    def prepare(node_input: str) -> str:
        ran.append(node_input)
        return f"prepared {node_input}"

    model = FailsThenAnswers(1)
    runner = Runner(Workflow("wf", edges=[(START, prepare), (prepare, LlmAgent("writer", model=model))]))
    session = await runner.create_session()
    failed = await runner.run(session.id, "x")
    assert failed.status == SessionStatus.FAILED
    assert failed.session.error["cause"]["code"] == "model_error"
    record = await runner.retry(session.id, retried_by="manager")
    assert record.status == SessionStatus.RUNNING
    assert record.error is None
    done = await runner.run_pending(session.id)
    assert done.status == SessionStatus.COMPLETED
    assert done.output == "Answered."
    assert ran == ["x"]  # the step before the failure did not run again
    assert model.calls == 2
    events = await runner.store.list_events(session.id)
    marks = [e.custom_metadata[RETRY_KEY] for e in events if e.custom_metadata and RETRY_KEY in e.custom_metadata]
    assert marks == [{"error_code": "node_failed", "retried_by": "manager"}]
    assert any(e.error_code == "node_failed" for e in events)  # the failure stays in the history


async def test_a_retry_opens_again_the_interrupts_the_failure_cancelled():
    @node
    def ask():
        return RequestInput(interrupt_id="ok", message="Fine?")

    model = FailsThenAnswers(1)
    wf = Workflow("wf", edges=[(START, ask), (START, LlmAgent("writer", model=model))])
    runner = Runner(wf)
    session = await runner.create_session()
    failed = await runner.run(session.id, "x")
    assert failed.status == SessionStatus.FAILED
    assert await runner.store.pending_interrupts(session.id) == []
    await runner.retry(session.id)
    assert [r.id for r in await runner.store.pending_interrupts(session.id)] == ["ok"]
    waiting = await runner.run_pending(session.id)
    assert waiting.status == SessionStatus.WAITING
    done = await runner.resume(session.id, {"ok": {"result": "yes"}})
    assert done.status == SessionStatus.COMPLETED


async def test_only_a_failed_session_is_retried():
    runner = Runner(LlmAgent("a", model=ScriptedModel(["hi"])))
    session = await runner.create_session()
    await runner.run(session.id, "x")
    with pytest.raises(SessionNotFailedError) as info:
        await runner.retry(session.id)
    assert info.value.details["status"] == SessionStatus.COMPLETED


# -- empty replies ------------------------------------------------------------------------------


def streaming(base_url: str, sleeps: Sleeps, *, attempts: int = 3) -> RetryingModel:
    backend = OpenAIModel(base_url, KEY, "local-model", timeout=5.0, stream=True)
    return RetryingModel(backend, ModelRetry(attempts=attempts, initial_delay=0.5, multiplier=2.0), sleep=sleeps)


@pytest.mark.parametrize("stream", [False, True])
async def test_an_empty_reply_is_asked_again(server, stream):
    server.replies.extend([{"text": ""}, {"text": "  \n"}, {"text": "Dear Ann, thanks."}])
    sleeps = Sleeps()
    model = streaming(server.base_url, sleeps) if stream else retrying(server.base_url, sleeps)
    assert (await final(model, request())).text == "Dear Ann, thanks."
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


async def test_a_plain_json_body_to_a_streaming_request_is_not_an_answer(server):
    server.replies.extend([{"text": "Hello there.", "plain_json": True}] * 2)
    with pytest.raises(ModelError) as info:
        await final(streaming(server.base_url, Sleeps(), attempts=2), request())
    assert info.value.details == {"kind": "empty_reply", "attempts": 2}
    assert "answer was empty" in info.value.message


async def test_empty_replies_every_time_fail_the_session_instead_of_a_blank_draft(server):
    server.replies.extend([{"text": ""}] * 3)
    runner = Runner(Workflow("wf", edges=[(START, LlmAgent("writer", model=streaming(server.base_url, Sleeps())))]))
    session = await runner.create_session()
    result = await runner.run(session.id, "write")
    assert result.status == SessionStatus.FAILED
    assert "gave no usable answer after 3 attempts: the model's answer was empty" in result.session.error["message"]
