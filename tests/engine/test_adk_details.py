"""Smaller ADK 2.13 behaviours: credentials for a node, tool arguments as sent, state writes of
one turn's parallel calls, inline data parts, streamed node events."""

from __future__ import annotations

import base64

from engine import (
    START,
    AuthConfig,
    AuthCredential,
    Content,
    Context,
    Event,
    FunctionCall,
    LlmAgent,
    Part,
    ScriptedModel,
    SessionStatus,
    ToolContext,
    Workflow,
    node,
)
from tests.engine.helpers import calls, responses, start, texts

KEY = AuthConfig(
    auth_scheme={"type": "apiKey", "in": "header", "name": "X-Api-Key"},
    raw_auth_credential=AuthCredential(auth_type="apiKey", api_key="placeholder"),
    credential_key="weather_key",
)


async def test_a_node_with_an_auth_config_asks_for_a_credential_that_never_reaches_state():
    @node(auth_config=KEY)
    def fetch(ctx: Context) -> str:
        credential = ctx.get_auth_response(KEY)
        return f"used {credential.api_key[:2]}**"

    runner, sid, result = await start(Workflow("wf", edges=[(START, fetch)]))
    [request] = result.interrupts
    assert request.id == "wf_auth:wf@1/fetch@1"
    assert request.function_name == "adk_request_credential"
    [call] = calls(result.events, "adk_request_credential")
    assert call.args["functionCallId"] == request.id
    assert call.args["message"] == "Please provide your API key for X-Api-Key."
    assert call.args["authConfig"]["credentialKey"] == "weather_key"

    result = await runner.resume(sid, {request.id: {"result": "s3cret"}})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "used s3**"
    assert "s3cret" not in repr(result.session.state)
    assert not any("s3cret" in repr(e.state_delta) for e in await runner.store.list_events(sid))


async def test_tool_arguments_reach_the_tool_as_the_model_sent_them():
    seen: list[object] = []

    def transfer(amount: float) -> str:
        """Transfer money."""
        seen.append(amount)
        return f"sent ${amount}"

    model = ScriptedModel([FunctionCall(name="transfer", args={"amount": 50}), "Done."])
    _, _, result = await start(LlmAgent("bank", model=model, tools=[transfer]))
    assert seen == [50] and type(seen[0]) is int  # ADK 2.13 passes 50, not 50.0
    assert responses(result.events, "transfer")[0].response == {"result": "sent $50"}


async def test_parallel_calls_of_one_turn_keep_every_state_write_in_call_order():
    async def remember(city: str, tool_context: ToolContext) -> str:
        """Remember a city."""
        if "cities" not in tool_context.state:
            tool_context.state["cities"] = []
        tool_context.state["cities"].append(city)
        tool_context.state[f"last_{len(tool_context.state['cities'])}"] = city
        return city

    turn = Content(
        role="model",
        parts=[
            Part(function_call=FunctionCall(name="remember", args={"city": "New York"})),
            Part(function_call=FunctionCall(name="remember", args={"city": "London"})),
        ],
    )
    model = ScriptedModel([turn, "Noted."])
    _, _, result = await start(LlmAgent("agent", model=model, tools=[remember]))
    assert result.session.state["cities"] == ["New York", "London"]
    assert result.session.state["last_1"] == "New York" and result.session.state["last_2"] == "London"
    [delta] = [e.state_delta for e in result.events if e.state_delta]
    assert delta["cities"] == ["New York", "London"]


async def test_inline_data_parts_round_trip_and_partial_events_are_streamed_not_stored():
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(200, 256))
    streamed: list[str] = []

    def picture():
        yield Event(message=[Part.from_text("look:"), Part.from_bytes(data=png, mime_type="image/png")])
        yield Event(message="typ", partial=True)
        yield Event(message="ing", partial=True)

    runner, sid, _ = await start(Workflow("wf", edges=[(START, picture)]))
    stored = await runner.store.list_events(sid)
    [image] = [p.inline_data for e in stored if e.content for p in e.content.parts if p.inline_data]
    assert image.mime_type == "image/png" and image.to_bytes() == png
    assert image.data == base64.urlsafe_b64encode(png).decode()  # genai's wire form
    assert Event.from_json(stored[-1].to_json()).content == stored[-1].content
    assert "typ" not in texts(stored) and "ing" not in texts(stored)

    def listen(event: Event) -> None:
        if event.partial:
            streamed.append(event.text)

    session = await runner.create_session()
    await runner.run(session.id, "again", listener=listen)
    assert streamed == ["typ", "ing"]


def test_the_credential_request_leaves_an_oauth_client_secret_out():
    config = AuthConfig(
        auth_scheme={"type": "oauth2"},
        raw_auth_credential=AuthCredential(auth_type="oauth2", oauth2={"clientId": "app", "clientSecret": "hush"}),
        credential_key="k",
    )
    assert config.to_wire()["rawAuthCredential"]["oauth2"] == {"clientId": "app"}
    assert config.raw_auth_credential is not None and config.raw_auth_credential.oauth2 == {
        "clientId": "app",
        "clientSecret": "hush",
    }
