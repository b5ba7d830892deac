"""Interrupts: ADK's wire form, the two ways of resuming, answer unwrapping and validation, ids."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from engine import (
    START,
    AlreadyDecidedError,
    AmbiguousAnswerError,
    AnswerInvalidError,
    Content,
    Context,
    Event,
    FunctionResponse,
    InterruptKind,
    Part,
    RequestInput,
    SessionStatus,
    UnknownInterruptError,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, outputs, responses, start


class Decision(BaseModel):
    approved: bool
    days: int | None = None


def asker(request: RequestInput):
    def ask():
        return request

    return ask


def echo(node_input):
    return {"got": node_input}


def wf_asking(request: RequestInput) -> Workflow:
    return Workflow("wf", edges=[(START, node(asker(request), name="ask"), echo)])


# -- wire form ------------------------------------------------------------------------------


async def test_a_request_input_becomes_an_adk_request_input_call_listed_as_long_running():
    request = RequestInput(interrupt_id="q1", message="Approve?", payload={"amount": 5}, response_schema=Decision)
    _, _, result = await start(wf_asking(request))
    assert result.status == SessionStatus.WAITING
    event = next(e for e in result.events if e.function_calls())
    wire = event.to_json()
    assert wire["author"] == "wf"
    assert wire["content"]["role"] == "model"
    assert wire["longRunningToolIds"] == ["q1"]
    assert wire["nodeInfo"]["path"] == "wf@1/ask@1"
    call = wire["content"]["parts"][0]["functionCall"]
    assert call["id"] == "q1"
    assert call["name"] == "adk_request_input"
    assert call["args"]["interruptId"] == "q1"
    assert call["args"]["message"] == "Approve?"
    assert call["args"]["payload"] == {"amount": 5}
    assert call["args"]["response_schema"]["properties"]["approved"]["type"] == "boolean"
    [record] = result.interrupts
    assert (record.id, record.kind, record.path, record.message) == (
        "q1",
        InterruptKind.INPUT,
        "wf@1/ask@1",
        "Approve?",
    )


async def test_a_request_without_an_id_gets_a_fresh_one():
    _, _, first = await start(wf_asking(RequestInput(message="?")))
    _, _, second = await start(wf_asking(RequestInput(message="?")))
    assert first.interrupts[0].id != second.interrupts[0].id
    assert len(first.interrupts[0].id) == 32


# -- resuming -------------------------------------------------------------------------------


async def test_the_answer_becomes_the_node_input_of_the_next_node():
    counts = Counts()

    def ask():
        counts.hit("ask")
        return RequestInput(message="name?")

    wf = Workflow("wf", edges=[(START, ask, echo)])
    runner, sid, result = await start(wf)
    result = await runner.resume(sid, {result.interrupts[0].id: {"result": "Ada"}})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == {"got": "Ada"}
    assert counts["ask"] == 1  # the asking node does not run again
    # as in ADK, the answered node emits no output event of its own; the answer flows on
    assert outputs(result.events) == {"wf@1/echo@1": {"got": "Ada"}}
    stored = await runner.store.list_events(sid)
    user_event = next(e for e in stored if e.author == "user" and e.function_responses())
    assert user_event.function_responses()[0].response == {"result": "Ada"}


async def test_a_rerun_on_resume_node_runs_again_under_the_same_run_id_with_resume_inputs():
    runs: list[dict] = []

    @node(rerun_on_resume=True)
    def review(ctx: Context):
        runs.append(dict(ctx.resume_inputs))
        answer = ctx.resume_inputs.get("review")
        if answer is None:
            yield RequestInput(interrupt_id="review", message="ok?")
            return
        yield Event(message=f"reviewed: {answer}")

    runner, sid, result = await start(Workflow("wf", edges=[(START, review)]))
    result = await runner.resume(sid, {"review": "fine"})
    assert result.status == SessionStatus.COMPLETED
    assert runs == [{}, {"review": "fine"}]
    assert {e.node_info.path for e in result.events if e.node_info.path} == {"wf@1/review@1"}


async def test_a_rerun_node_with_several_questions_reruns_when_any_is_answered():
    runs: list[dict] = []

    @node(rerun_on_resume=True)
    def both(ctx: Context):
        runs.append(dict(ctx.resume_inputs))
        missing = [k for k in ("a", "b") if k not in ctx.resume_inputs]
        for key in missing:
            yield RequestInput(interrupt_id=key, message=f"{key}?")
        if not missing:
            yield dict(ctx.resume_inputs)

    runner, sid, result = await start(Workflow("wf", edges=[(START, both)]))
    assert sorted(r.id for r in result.interrupts) == ["a", "b"]
    result = await runner.resume(sid, {"b": 2})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == ["a"]  # asked again, the same pending interrupt
    assert len(calls(result.events)) == 0  # no second call event for 'a'
    result = await runner.resume(sid, {"a": 1})
    assert result.output == {"a": 1, "b": 2}
    assert runs == [{}, {"b": 2}, {"a": 1, "b": 2}]


async def test_a_plain_node_asking_several_things_completes_with_a_dict_of_answers():
    def two():
        yield RequestInput(interrupt_id="first", message="1?")
        yield RequestInput(interrupt_id="second", message="2?")

    wf = Workflow("wf", edges=[(START, two, echo)])
    runner, sid, result = await start(wf)
    result = await runner.resume(sid, {"second": "B"})
    assert result.status == SessionStatus.WAITING
    result = await runner.resume(sid, {"first": "A"})
    assert result.output == {"got": {"second": "B", "first": "A"}}


async def test_the_same_interrupt_id_is_reused_across_loop_iterations():
    @node(rerun_on_resume=True)
    def review(ctx: Context):
        answer = ctx.resume_inputs.get("review")
        if answer is None:
            yield RequestInput(interrupt_id="review", message=f"round {ctx.run_id}")
            return
        yield Event(route="again" if answer == "again" else "done")

    wf = Workflow("wf", edges=[(START, review), (review, {"again": review})])
    runner, sid, result = await start(wf)
    for expected_round in ("2", "3"):
        result = await runner.resume(sid, {"review": "again"})
        assert result.status == SessionStatus.WAITING
        assert result.interrupts[0].id == "review"
        assert calls(result.events)[-1].args["message"] == f"round {expected_round}"
    result = await runner.resume(sid, {"review": "done"})
    assert result.status == SessionStatus.COMPLETED
    events = await runner.store.list_events(sid)
    assert len(calls(events, "adk_request_input")) == 3
    assert len(responses(events, "adk_request_input")) == 3


async def test_several_pending_interrupts_are_resumed_one_at_a_time_by_id():
    def ask_a():
        return RequestInput(interrupt_id="a", message="a?")

    def ask_b():
        return RequestInput(interrupt_id="b", message="b?")

    wf = Workflow("wf", edges=[(START, (ask_a, ask_b))])
    runner, sid, result = await start(wf)
    assert sorted(r.id for r in result.interrupts) == ["a", "b"]
    result = await runner.resume(sid, {"b": "B"})
    assert result.status == SessionStatus.WAITING
    assert [r.id for r in result.interrupts] == ["a"]
    result = await runner.resume(sid, {"a": "A"})
    assert result.status == SessionStatus.COMPLETED
    assert result.interrupts == []


async def test_an_answer_naming_no_id_while_several_are_pending_is_refused_with_the_ids():
    wf = Workflow(
        "wf",
        edges=[
            (
                START,
                (
                    node(asker(RequestInput(interrupt_id="x")), name="x"),
                    node(asker(RequestInput(interrupt_id="y")), name="y"),
                ),
            )
        ],
    )
    runner, sid, _ = await start(wf)
    before = await runner.store.list_events(sid)
    with pytest.raises(AmbiguousAnswerError) as info:
        await runner.resume(sid, {None: "whatever"})
    assert info.value.details["pending"] == ["x", "y"]
    assert info.value.code == "interrupt_ambiguous"
    assert await runner.store.list_events(sid) == before
    assert await runner.store.take_answers(sid) == []


async def test_an_answer_naming_no_id_answers_the_only_pending_interrupt():
    runner, sid, _ = await start(wf_asking(RequestInput(message="?")))
    result = await runner.resume(sid, {None: "only"})
    assert result.output == {"got": "only"}


async def test_an_unknown_id_is_refused_with_the_pending_ids():
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="real")))
    with pytest.raises(UnknownInterruptError) as info:
        await runner.resume(sid, {"imaginary": "x"})
    assert info.value.details["pending"] == ["real"]


async def test_a_second_answer_to_the_same_interrupt_is_refused_naming_the_decider():
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="once")))
    await runner.submit(sid, {"once": "first"}, decided_by="ada")
    with pytest.raises(AlreadyDecidedError) as info:
        await runner.submit(sid, {"once": "second"}, decided_by="bob")
    assert info.value.details["decided_by"] == "ada"
    assert info.value.details["decided_at"] is not None
    result = await runner.run_pending(sid)
    assert result.output == {"got": "first"}


async def test_answers_can_come_as_a_user_content_of_function_responses():
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="q")))
    content = Content(
        role="user",
        parts=[Part(function_response=FunctionResponse(id="q", name="adk_request_input", response={"result": "hi"}))],
    )
    result = await runner.resume(sid, content)
    assert result.output == {"got": "hi"}


# -- unwrapping and validation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "answer", "delivered"),
    [
        (None, {"result": "42"}, "42"),  # free text stays text
        (None, "plain", "plain"),
        (None, {"text": "yes"}, {"text": "yes"}),  # not a one-key result wrapper
        (Decision, {"result": '{"approved": true}'}, {"approved": True}),  # JSON string parsed
        (Decision, {"approved": False, "days": 2}, {"approved": False, "days": 2}),
        (int, {"result": "42"}, 42),  # parsed because the schema is not a string
        ({"type": "string"}, {"result": "42"}, "42"),  # not parsed: the schema wants a string
        ({"type": "array", "items": {"type": "integer"}}, [1, 2], [1, 2]),
    ],
)
async def test_answers_are_unwrapped_and_validated_against_the_stored_schema(schema, answer, delivered):
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="q", response_schema=schema)))
    result = await runner.resume(sid, {"q": answer})
    assert result.output == {"got": delivered}


async def test_an_invalid_answer_is_refused_with_the_errors_and_changes_nothing():
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="q", response_schema=Decision)))
    before_events = await runner.store.list_events(sid)
    before_session = await runner.store.get_session(sid)
    with pytest.raises(AnswerInvalidError) as info:
        await runner.resume(sid, {"q": {"approved": "maybe", "days": "x"}})
    assert info.value.code == "answer_invalid"
    assert {tuple(e["path"]) for e in info.value.details["errors"]} == {("approved",), ("days",)}
    assert await runner.store.list_events(sid) == before_events
    after = await runner.store.get_session(sid)
    assert (after.version, after.status, after.state) == (before_session.version, "waiting", before_session.state)
    assert [r.id for r in await runner.store.pending_interrupts(sid)] == ["q"]
    assert await runner.store.take_answers(sid) == []
    result = await runner.resume(sid, {"q": {"approved": True}})
    assert result.output == {"got": {"approved": True}}


async def test_free_text_against_an_object_schema_is_refused():
    runner, sid, _ = await start(wf_asking(RequestInput(interrupt_id="q", response_schema=Decision)))
    with pytest.raises(AnswerInvalidError):
        await runner.resume(sid, {"q": "sure, go ahead"})
