"""LLM agent nodes: instruction templates, output_key, output_schema, modes, streaming."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    START,
    ConfigurationError,
    Event,
    FunctionCall,
    LlmAgent,
    ScriptedModel,
    SessionStatus,
    Workflow,
    WorkflowDataError,
    render_instruction,
)
from tests.engine.helpers import calls, start, texts

# -- templates ------------------------------------------------------------------------------


def test_templates_fill_required_and_optional_keys_from_state():
    state = {"topic": "tea", "count": 3, "none": None, "obj": {"a": 1}, "app:brand": "Acme"}
    text = "About {topic} ({count}) {missing?}|{none}|{obj}|{app:brand}|{not-an-id}|{ spaced }"
    assert render_instruction(text, state) == 'About tea (3) ||{"a": 1}|Acme|{not-an-id}|{ spaced }'


def test_a_missing_required_key_raises_naming_it():
    with pytest.raises(WorkflowDataError, match=r"\{topic\}") as info:
        render_instruction("About {topic}", {})
    assert info.value.details == {"key": "topic"}


async def test_the_model_gets_the_rendered_instruction_and_the_node_input():
    model = ScriptedModel(["a headline"])

    def setup(node_input):
        return Event(state={"topic": node_input}, output=f"write about {node_input}")

    writer = LlmAgent("writer", model=model, instruction="Topic: {topic}. Feedback: {feedback?}")
    _, _, result = await start(Workflow("wf", edges=[(START, setup, writer)]), "tea")
    [request] = model.requests
    assert request.instruction == "Topic: tea. Feedback: "
    assert request.contents[0].text == "write about tea"
    assert request.agent_name == "writer"
    assert result.output == "a headline"


async def test_a_callable_instruction_gets_the_context():
    model = ScriptedModel(["ok"])
    agent = LlmAgent("a", model=model, instruction=lambda ctx: f"path {ctx.node_path}")
    await start(agent, "hi")
    assert model.requests[0].instruction == "path a@1"


# -- outputs --------------------------------------------------------------------------------


async def test_output_key_stores_the_reply_in_state_and_the_reply_is_the_output():
    model = ScriptedModel(["Dear customer..."])
    drafter = LlmAgent("drafter", model=model, output_key="draft")
    _, _, result = await start(Workflow("wf", edges=[(START, drafter)]), "complaint")
    assert result.session.state["draft"] == "Dear customer..."
    event = next(e for e in result.events if e.author == "drafter")
    assert event.node_info.message_as_output is True
    assert event.node_info.output_for == ["wf@1/drafter@1", "wf@1"]
    assert result.output == "Dear customer..."


class Grade(BaseModel):
    grade: str
    score: int


@pytest.mark.parametrize("reply", ['{"grade": "A", "score": "9"}', '```json\n{"grade": "A", "score": 9}\n```'])
async def test_output_schema_parses_json_into_the_output_and_state(reply):
    model = ScriptedModel([reply])
    grader = LlmAgent("grader", model=model, output_schema=Grade, output_key="grade")
    _, _, result = await start(Workflow("wf", edges=[(START, grader)]), "grade it")
    assert result.output == {"grade": "A", "score": 9}
    assert result.session.state["grade"] == {"grade": "A", "score": 9}
    assert model.requests[0].output_schema["required"] == ["grade", "score"]


@pytest.mark.parametrize("reply", ["not json", '{"grade": "A"}'])
async def test_a_reply_that_fails_the_output_schema_fails_the_node(reply):
    grader = LlmAgent("grader", model=ScriptedModel([reply]), output_schema=Grade)
    _, _, result = await start(Workflow("wf", edges=[(START, grader)]), "x")
    assert result.status == SessionStatus.FAILED
    assert result.session.error["cause"]["code"] == "data_invalid"


async def test_a_json_schema_dict_works_as_output_schema():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    agent = LlmAgent("a", model=ScriptedModel(['{"ok": true}']), output_schema=schema)
    _, _, result = await start(Workflow("wf", edges=[(START, agent)]), "x")
    assert result.output == {"ok": True}


# -- models ---------------------------------------------------------------------------------


async def test_an_agent_without_a_model_uses_the_runners_model():
    model = ScriptedModel(["from the runner's model"])
    _, _, result = await start(LlmAgent("a"), "x", model=model)
    assert result.output == "from the runner's model"


async def test_no_model_at_all_fails_the_session_with_a_clear_error():
    _, _, result = await start(LlmAgent("a"), "x")
    assert result.status == SessionStatus.FAILED
    assert "has no model" in result.session.error["message"]


def test_mode_must_be_known():
    with pytest.raises(ConfigurationError):
        LlmAgent("a", mode="dance")


async def test_streamed_text_reaches_the_listener_as_partial_events_and_is_not_stored():
    model = ScriptedModel(["three little words"], stream=True)
    seen = []
    from engine import InMemoryStore, Runner

    runner = Runner(LlmAgent("a", model=model), InMemoryStore())
    session = await runner.create_session()
    result = await runner.run(session.id, "x", listener=seen.append)
    partials = [e for e in seen if e.partial]
    assert "".join(e.text for e in partials) == "three little words"
    assert len(partials) == 3
    assert len({e.id for e in partials}) == 1  # one message id, several deltas
    stored = await runner.store.list_events(session.id)
    assert not any(e.partial for e in stored)
    assert texts(result.events) == ["three little words"]


# -- chat and task modes --------------------------------------------------------------------


async def test_a_chat_agent_at_the_root_remembers_earlier_turns():
    model = ScriptedModel(["Hi Ada.", "You are Ada."])
    runner, sid, _ = await start(LlmAgent("chat", model=model), "I am Ada")
    result = await runner.run(sid, "Who am I?")
    assert result.output == "You are Ada."
    assert [c.text for c in model.requests[1].contents] == ["I am Ada", "Hi Ada.", "Who am I?"]


class Identity(BaseModel):
    name: str
    phone: str


async def test_a_task_agent_chats_over_turns_and_finishes_with_finish_task():
    model = ScriptedModel(
        [
            "What is your phone number?",
            FunctionCall(name="finish_task", args={"name": "Ada"}),  # missing phone: refused
            FunctionCall(name="finish_task", args={"name": "Ada", "phone": "555"}),
        ]
    )
    intake = LlmAgent("intake", model=model, mode="task", output_schema=Identity, instruction="Collect identity.")

    def greet(node_input: Identity):
        return f"Hello {node_input.name} ({node_input.phone})"

    wf = Workflow("wf", edges=[(START, intake, greet)])
    runner, sid, result = await start(wf, "I am Ada")
    assert result.status == SessionStatus.WAITING
    assert result.interrupts == []  # waiting for the user's next message, not an interrupt
    assert {e.isolation_scope for e in result.events if e.author == "intake"} == {"wf@1/intake@1"}
    result = await runner.run(sid, "555")
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "Hello Ada (555)"
    finish_responses = [r.response for e in result.events for r in e.function_responses()]
    assert "error" in finish_responses[0]
    assert finish_responses[1] == {"result": "Task completed."}
    declared = [t["name"] for t in model.requests[0].tools]
    assert declared == ["finish_task"]
    # the same invocation goes on: the user's reply does not start a new one
    events = await runner.store.list_events(sid)
    assert len({e.invocation_id for e in events}) == 1
    assert len(calls(events, "finish_task")) == 2
