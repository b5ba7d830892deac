"""The model protocol's built-in backends: the scripted model and the offline draft model."""

from __future__ import annotations

import pytest

from engine import Content, FunctionCall, LlmRequest, Model, ModelError, OfflineModel, ScriptedModel


def request(agent: str = "a", text: str = "hello") -> LlmRequest:
    return LlmRequest(agent_name=agent, instruction="", contents=[Content.user_text(text)])


async def final(model, req):
    return [r async for r in model.generate(req)][-1].content


def test_both_are_models():
    assert isinstance(ScriptedModel(), Model)
    assert isinstance(OfflineModel(), Model)


async def test_the_scripted_model_answers_in_order_and_records_requests():
    model = ScriptedModel(
        [
            "text",
            FunctionCall(name="tool", args={"x": 1}),
            {"role": "model", "parts": [{"text": "from a dict"}]},
            lambda req: f"echo {req.contents[-1].text}",
        ]
    )
    assert (await final(model, request())).text == "text"
    assert (await final(model, request())).function_calls()[0].args == {"x": 1}
    assert (await final(model, request())).text == "from a dict"
    assert (await final(model, request(text="hi"))).text == "echo hi"
    assert model.calls == 4 and len(model.requests) == 4
    with pytest.raises(ModelError, match="no response left for call 5"):
        await final(model, request())


async def test_the_offline_model_follows_its_policy_per_agent_and_streams():
    model = OfflineModel({"drafter": lambda req: "Dear customer, sorry."})
    responses = [r async for r in model.generate(request("drafter"))]
    assert [r.content.text for r in responses if r.partial] == ["Dear ", "customer, ", "sorry."]
    assert responses[-1].content.text == "Dear customer, sorry."
    other = await final(model, request("someone", "a question"))
    assert other.text == "[offline model] Noted: a question"
    assert model.calls == 2 and model.offline
