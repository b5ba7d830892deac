"""The OpenAI-compatible backend against a real local HTTP server (``openai_server.FakeOpenAI``)."""

from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel

from engine import (
    START,
    Content,
    FunctionCall,
    FunctionResponse,
    InMemoryStore,
    LlmAgent,
    LlmRequest,
    Model,
    ModelError,
    Part,
    Runner,
    SessionStatus,
    Workflow,
)
from engine.openai_model import OpenAIModel, to_messages
from tests.engine.openai_server import FakeOpenAI


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def model_for(server: FakeOpenAI, **options) -> OpenAIModel:
    return OpenAIModel(server.base_url, "test-key", "local-model", max_retries=0, **options)


def request(text: str = "hi", **options) -> LlmRequest:
    return LlmRequest(agent_name="a", instruction="Be brief.", contents=[Content.user_text(text)], **options)


async def collect(model: OpenAIModel, req: LlmRequest):
    return [r async for r in model.generate(req)]


def test_it_is_a_model():
    assert isinstance(OpenAIModel("http://127.0.0.1:1/v1", "k", "m"), Model)


async def test_a_plain_reply_without_streaming(server):
    server.replies.append({"text": "Hello there."})
    [response] = await collect(model_for(server, stream=False), request())
    assert not response.partial
    assert response.content.text == "Hello there."
    [got] = server.requests
    assert got["headers"]["authorization"] == "Bearer test-key"
    assert got["body"]["model"] == "local-model"
    assert got["body"]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert "stream" not in got["body"] or got["body"]["stream"] is False


async def test_a_streamed_reply_yields_deltas_then_the_whole_text(server):
    server.replies.append({"text": "one two three"})
    responses = await collect(model_for(server), request())
    partials = [r.content.text for r in responses if r.partial]
    assert partials == ["one ", "two ", "three"]
    assert responses[-1].content.text == "one two three" and not responses[-1].partial
    assert server.requests[0]["body"]["stream"] is True


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_calls_come_back_as_function_calls(server, stream):
    server.replies.append({"tool_calls": [{"name": "lookup", "arguments": {"city": "Oslo", "days": 3}}]})
    tools = [{"name": "lookup", "description": "Look up.", "parameters": {"type": "object", "properties": {}}}]
    responses = await collect(model_for(server, stream=stream), request(tools=tools))
    [call] = responses[-1].content.function_calls()
    assert (call.name, call.args) == ("lookup", {"city": "Oslo", "days": 3})
    assert server.requests[0]["body"]["tools"] == [
        {
            "type": "function",
            "function": {"name": "lookup", "description": "Look up.", "parameters": tools[0]["parameters"]},
        }
    ]


async def test_server_errors_raise_model_error_with_the_status(server):
    server.replies.append({"status": 400, "error": "bad request"})
    with pytest.raises(ModelError) as info:
        await collect(model_for(server, stream=False), request())
    assert info.value.details["status_code"] == 400


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_names_the_variable_it_came_from(server, status):
    server.replies.append({"status": status, "error": "invalid api key"})
    model = OpenAIModel(server.base_url, "wrong", "local-model", max_retries=0, stream=False, api_key_env="ACME_KEY")
    with pytest.raises(ModelError) as info:
        await collect(model, request())
    assert info.value.details["status_code"] == status
    assert "check the API key, the environment variable ACME_KEY (named by API_KEY_ENV)" in str(info.value)
    assert "wrong" not in str(info.value)


async def test_a_401_without_a_key_says_to_set_api_key_env(server):
    server.replies.append({"status": 401, "error": "no key"})
    model = OpenAIModel(server.base_url, "not-needed", "local-model", max_retries=0, stream=False, api_key_env="")
    with pytest.raises(ModelError) as info:
        await collect(model, request())
    assert "API_KEY_ENV (no key was sent" in str(info.value)


async def test_an_unreachable_server_raises_model_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with pytest.raises(ModelError):
        await collect(OpenAIModel(url, "k", "m", max_retries=0, timeout=2), request())


# -- with agents ----------------------------------------------------------------------------


async def test_an_agent_calls_a_tool_through_the_backend_and_streams_its_answer(server):
    def weather(city: str) -> dict:
        """Today's weather.

        Args:
            city: The city.
        """
        return {"city": city, "sky": "clear"}

    server.replies += [
        {"tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}]},
        {"text": "It is clear in Oslo."},
    ]
    agent = LlmAgent("assistant", model=model_for(server), instruction="Answer about weather.", tools=[weather])
    runner = Runner(agent, InMemoryStore())
    session = await runner.create_session()
    seen = []
    result = await runner.run(session.id, "Weather in Oslo?", listener=seen.append)
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "It is clear in Oslo."
    assert "".join(e.text for e in seen if e.partial) == "It is clear in Oslo."
    declared = server.requests[0]["body"]["tools"][0]["function"]
    assert declared["name"] == "weather"
    assert declared["parameters"]["properties"]["city"]["description"] == "The city."
    second = server.requests[1]["body"]["messages"]
    assistant, tool = second[-2], second[-1]
    assert assistant["role"] == "assistant"
    [tool_call] = assistant["tool_calls"]
    assert tool_call["function"] == {"name": "weather", "arguments": '{"city": "Oslo"}'}
    assert tool == {"role": "tool", "tool_call_id": tool_call["id"], "content": '{"city": "Oslo", "sky": "clear"}'}


class Grade(BaseModel):
    grade: str


async def test_an_output_schema_is_sent_as_a_json_schema_response_format(server):
    server.replies.append({"text": '{"grade": "A"}'})
    grader = LlmAgent("grader", model=model_for(server), output_schema=Grade)
    runner = Runner(Workflow("wf", edges=[(START, grader)]), InMemoryStore())
    session = await runner.create_session()
    result = await runner.run(session.id, "grade this")
    assert result.output == {"grade": "A"}
    body = server.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["grade"]
    assert "JSON Schema" in body["messages"][0]["content"]


async def test_a_failing_backend_fails_the_session_with_model_error(server):
    server.replies.append({"status": 500, "error": "overloaded"})
    runner = Runner(LlmAgent("a", model=model_for(server)), InMemoryStore())
    session = await runner.create_session()
    result = await runner.run(session.id, "x")
    assert result.status == SessionStatus.FAILED
    assert result.session.error["code"] == "model_error"


# -- message mapping ------------------------------------------------------------------------


def test_pending_calls_get_a_placeholder_and_later_results_come_as_user_messages():
    call = FunctionCall(id="c1", name="export", args={"kind": "csv"})
    contents = [
        Content.user_text("export"),
        Content(role="model", parts=[Part(function_call=call)]),
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(id="c1", name="export", response={"status": "0%"}))],
        ),
        Content(role="model", parts=[Part(text="Started.")]),
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(id="c1", name="export", response={"status": "done"}))],
        ),
    ]
    messages = to_messages("", contents)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[2]["content"] == '{"status": "0%"}'
    assert messages[4]["content"] == 'Result of the tool call export (c1): {"status": "done"}'
    waiting = to_messages("", contents[:2])
    assert waiting[-1] == {"role": "tool", "tool_call_id": "c1", "content": '{"status": "pending"}'}
