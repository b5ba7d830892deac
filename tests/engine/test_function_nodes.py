"""Function nodes: kinds, parameter binding, coercion, schemas, and the ``@node`` options."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from engine import (
    START,
    ConfigurationError,
    Context,
    Event,
    FunctionNode,
    InMemoryStore,
    RetryConfig,
    Runner,
    SessionStatus,
    Workflow,
    node,
)
from tests.engine.helpers import Counts, calls, outputs, start, texts


def wf_of(*nodes, **options):
    return Workflow("wf", edges=[(START, *nodes)], **options)


def failure(result):
    """(code of the failure, code of its cause) of a failed session."""
    assert result.status == SessionStatus.FAILED, result.status
    error = result.session.error
    return error["code"], error.get("cause", {}).get("code")


# -- kinds ----------------------------------------------------------------------------------


def plain(node_input):
    return f"plain {node_input}"


def gen(node_input):
    yield Event(message="working")
    yield f"gen {node_input}"


async def coro(node_input):
    await asyncio.sleep(0)
    return f"coro {node_input}"


async def agen(node_input):
    await asyncio.sleep(0)
    yield Event(message="working")
    yield f"agen {node_input}"


@pytest.mark.parametrize("func", [plain, gen, coro, agen])
async def test_sync_async_returning_and_yielding_functions_are_nodes(func):
    _, _, result = await start(wf_of(func), "x")
    assert result.status == SessionStatus.COMPLETED
    assert result.output == f"{func.__name__} x"


async def test_none_is_skipped_and_event_output_counts_as_the_output():
    def node_a():
        yield None
        yield Event(output={"k": 1}, message="with output")

    _, _, result = await start(wf_of(node_a))
    assert result.output == {"k": 1}
    assert texts(result.events) == ["with output"]


async def test_two_outputs_from_one_run_fail_the_node():
    def twice():
        yield 1
        yield 2

    _, _, result = await start(wf_of(twice))
    code, cause = failure(result)
    assert (code, cause) == ("node_failed", "config_invalid")
    assert "more than one output" in result.session.error["cause"]["message"]


async def test_function_node_events_are_authored_by_the_workflow():
    _, _, result = await start(wf_of(gen), "x")
    assert {e.author for e in result.events if e.node_info.path} == {"wf"}


# -- binding --------------------------------------------------------------------------------


async def test_parameters_bind_from_state_node_input_and_ctx():
    seen = {}

    def setup():
        return Event(state={"customer": "ada", "count": "3"})

    def use(customer: str, count: int, node_input, ctx, context: Context, missing: str = "default"):
        seen.update(
            customer=customer,
            count=count,
            node_input=node_input,
            ctx=ctx,
            same=ctx is context,
            missing=missing,
        )
        return "done"

    _, _, result = await start(wf_of(setup, use), "hello")
    assert result.status == SessionStatus.COMPLETED
    assert seen["customer"] == "ada"
    assert seen["count"] == 3  # coerced from "3" by the type hint
    assert seen["node_input"] is None  # setup output nothing
    assert isinstance(seen["ctx"], Context) and seen["same"]
    assert seen["ctx"].node_path == "wf@1/use@1"
    assert seen["missing"] == "default"


async def test_a_missing_parameter_without_default_fails_with_data_invalid():
    def needs(absent: str):
        return absent

    _, _, result = await start(wf_of(needs))
    assert failure(result) == ("node_failed", "data_invalid")
    assert result.session.error["cause"]["parameter"] == "absent"


class Order(BaseModel):
    id: int
    items: list[str]


async def test_type_hints_coerce_pydantic_models_from_state_and_input():
    got = {}

    def setup():
        return Event(state={"order": {"id": "7", "items": ["a"]}}, output={"id": 8, "items": []})

    def use(order: Order, node_input: Order):
        got["state"], got["input"] = order, node_input

    _, _, result = await start(wf_of(setup, use))
    assert result.status == SessionStatus.COMPLETED
    assert got["state"] == Order(id=7, items=["a"])
    assert got["input"] == Order(id=8, items=[])


async def test_a_value_of_the_wrong_type_fails_with_the_errors():
    def use(count: int):
        return count

    _, _, result = await start(wf_of(use), state={"count": "many"})
    assert failure(result) == ("node_failed", "data_invalid")
    assert result.session.error["cause"]["errors"][0]["path"] == []


async def test_node_input_binding_reads_parameters_from_a_dict_input():
    def make():
        return {"a": 2, "b": "3"}

    add = FunctionNode(lambda a, b: a + int(b), name="add", parameter_binding="node_input")
    _, _, result = await start(wf_of(make, add))
    assert result.output == 5


def test_parameter_binding_must_be_state_or_node_input():
    with pytest.raises(ConfigurationError):
        FunctionNode(lambda: None, name="x", parameter_binding="other")


# -- schemas --------------------------------------------------------------------------------


class Point(BaseModel):
    x: int
    y: int


async def test_input_schema_coerces_the_input_and_refuses_a_bad_one():
    seen = []
    checked = FunctionNode(lambda node_input: seen.append(node_input), name="checked", input_schema=Point)
    _, _, result = await start(wf_of(checked), {"x": "1", "y": 2})
    assert result.status == SessionStatus.COMPLETED
    assert seen == [{"x": 1, "y": 2}]
    _, _, result = await start(wf_of(checked), {"x": "one"})
    assert failure(result) == ("node_failed", "data_invalid")
    assert {tuple(e["path"]) for e in result.session.error["cause"]["errors"]} == {("x",), ("y",)}


async def test_output_schema_validates_and_dumps_the_output():
    ok = FunctionNode(lambda: Point(x=1, y=2), name="ok", output_schema=Point)
    _, _, result = await start(wf_of(ok))
    assert result.output == {"x": 1, "y": 2}
    bad = FunctionNode(lambda: {"x": 1}, name="bad", output_schema=Point)
    _, _, result = await start(wf_of(bad))
    assert failure(result) == ("node_failed", "data_invalid")


class Shape(BaseModel):
    count: int = 0
    label: str = ""


async def test_state_writes_are_validated_against_the_workflow_state_schema_at_emit_time():
    def good():
        return Event(state={"count": 2, "label": "x", "app:any": object.__name__, "user:u": 1, "temp:t": [1]})

    _, _, result = await start(wf_of(good, state_schema=Shape))
    assert result.status == SessionStatus.COMPLETED
    assert result.session.state == {"count": 2, "label": "x"}

    def wrong_type(ctx):
        ctx.state["count"] = "lots"
        yield Event(message="after")

    runner, sid, result = await start(wf_of(wrong_type, state_schema=Shape), state={"count": 1})
    assert failure(result) == ("node_failed", "data_invalid")
    assert result.session.error["cause"]["errors"] == [
        {"path": ["count"], "message": "Input should be a valid integer, unable to parse string as an integer"}
    ]
    assert result.session.state == {"count": 1}  # nothing applied
    assert not texts(await runner.store.list_events(sid))[1:]

    def undeclared():
        return Event(state={"other": 1})

    _, _, result = await start(wf_of(undeclared, state_schema=Shape))
    assert failure(result) == ("node_failed", "data_invalid")
    assert result.session.error["cause"]["errors"] == [
        {"path": ["other"], "message": "not declared in the state_schema"}
    ]


async def test_nested_nodes_inherit_the_state_schema():
    def inner():
        return Event(state={"count": "bad"})

    child = Workflow("child", edges=[(START, inner)])
    _, _, result = await start(wf_of(child, state_schema=Shape))
    assert result.status == SessionStatus.FAILED


def test_a_node_reading_an_undeclared_state_key_is_refused_at_construction():
    def reads(count: int, missing: str, user_ok: int = 0):
        return None

    with pytest.raises(ConfigurationError, match="'missing'"):
        wf_of(reads, state_schema=Shape)


# -- @node options --------------------------------------------------------------------------


async def test_node_name_option_renames_the_node():
    @node(name="renamed")
    def original():
        return 1

    _, _, result = await start(wf_of(original))
    assert "wf@1/renamed@1" in outputs(result.events)


async def test_retry_runs_again_up_to_max_attempts_with_backoff(monkeypatch):
    counts = Counts()
    delays: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(seconds, *args, **kwargs):
        delays.append(seconds)
        await real_sleep(0)

    @node(retry_config=RetryConfig(max_attempts=4, initial_delay=0.5, backoff_factor=3, max_delay=2.0))
    def flaky():
        counts.hit("flaky")
        if counts["flaky"] < 4:
            raise ConnectionError("try again")
        return "ok"

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    _, _, result = await start(wf_of(flaky))
    assert result.output == "ok"
    assert counts["flaky"] == 4
    assert delays == [0.5, 1.5, 2.0]  # 0.5, 0.5*3, capped at max_delay


async def test_retry_gives_up_after_max_attempts():
    counts = Counts()

    @node(retry_config=RetryConfig(max_attempts=2, initial_delay=0.001))
    def broken():
        counts.hit("broken")
        raise ConnectionError("down")

    _, _, result = await start(wf_of(broken))
    assert result.status == SessionStatus.FAILED
    assert counts["broken"] == 2


async def test_retry_only_retries_the_listed_exceptions():
    counts = Counts()

    @node(retry_config=RetryConfig(max_attempts=5, initial_delay=0.001, exceptions=(ConnectionError,)))
    def wrong():
        counts.hit("wrong")
        raise KeyError("not retried")

    _, _, result = await start(wf_of(wrong))
    assert result.status == SessionStatus.FAILED
    assert counts["wrong"] == 1


async def test_a_retried_attempt_keeps_its_events_and_an_error_event_but_not_its_interrupts():
    """ADK 2.13: a failed attempt's events stay, followed by an error event; ``attempt_count`` counts."""
    from engine import RequestInput

    counts = Counts()

    @node(retry_config=RetryConfig(max_attempts=2, initial_delay=0.001))
    def flaky(ctx):
        counts.hit("flaky")
        yield Event(message=f"attempt {ctx.attempt_count}")
        if counts["flaky"] == 1:
            ctx.state["half"] = "done"
            yield RequestInput(interrupt_id="early", message="?")
            raise ConnectionError("boom")
        yield "second"

    runner, sid, result = await start(wf_of(flaky))
    assert result.status == SessionStatus.COMPLETED
    assert texts(result.events)[:2] == ["attempt 1", "attempt 2"]
    errors = [(e.error_code, e.error_message, e.node_info.path) for e in result.events if e.error_code]
    assert errors == [("ConnectionError", "boom", "wf@1/flaky@1")]
    assert result.session.state["half"] == "done"  # stored with the attempt's events, as ADK does
    assert not calls(result.events)  # the failed attempt's question is withdrawn
    assert await runner.store.pending_interrupts(sid) == []


def test_retry_delay_adds_jitter_within_bounds():
    config = RetryConfig(initial_delay=1.0, jitter=0.5)
    for _ in range(20):
        assert 1.0 <= config.delay(1) <= 1.5


async def test_timeout_fails_a_slow_node_with_node_timeout():
    @node(timeout=0.05)
    async def slow():
        await asyncio.sleep(5)

    _, _, result = await start(wf_of(slow))
    assert failure(result) == ("node_failed", "node_timeout")


async def test_timeout_applies_per_attempt_and_can_be_retried():
    counts = Counts()

    @node(timeout=0.05, retry_config=RetryConfig(max_attempts=2, initial_delay=0.001, exceptions=(TimeoutError,)))
    async def slow_then_fast():
        counts.hit("run")
        if counts["run"] == 1:
            await asyncio.sleep(5)
        return "fast"

    _, _, result = await start(wf_of(slow_then_fast))
    assert result.output == "fast"
    assert counts["run"] == 2


def test_timeout_must_be_positive():
    with pytest.raises(ConfigurationError):
        FunctionNode(lambda: None, name="x", timeout=0)


async def test_require_confirmation_asks_first_and_runs_once_approved():
    counts = Counts()

    @node(require_confirmation=True)
    def delete(node_input):
        counts.hit("delete")
        return f"deleted {node_input}"

    runner, sid, result = await start(wf_of(delete), "file")
    assert result.status == SessionStatus.WAITING
    assert counts["delete"] == 0
    [call] = calls(result.events, "adk_request_input")
    assert call.id == "wf_tool_confirmation:wf@1/delete@1"
    assert call.args["payload"] == {"tool_name": "delete", "args": {"node_input": "file"}}
    assert call.args["response_schema"]["required"] == ["confirmed"]
    result = await runner.resume(sid, {call.id: {"confirmed": True}})
    assert result.status == SessionStatus.COMPLETED
    assert result.output == "deleted file"
    assert counts["delete"] == 1


async def test_a_declined_node_does_not_run_and_routes_declined():
    counts = Counts()

    @node(require_confirmation=True)
    def delete():
        counts.hit("delete")

    wf = Workflow("wf", edges=[(START, delete), (delete, {"declined": FunctionNode(lambda: "fallback", name="fb")})])
    runner, sid, result = await start(wf)
    result = await runner.resume(sid, {None: {"confirmed": False}})
    assert result.status == SessionStatus.COMPLETED
    assert counts["delete"] == 0
    assert outputs(result.events)["wf@1/delete@1"] == {"error": "The run of delete was declined."}
    assert result.output == "fallback"


async def test_require_confirmation_predicate_binds_arguments_by_name():
    @node(require_confirmation=lambda amount: amount > 100)
    def pay(amount: int):
        return f"paid {amount}"

    _, _, small = await start(wf_of(pay), state={"amount": 50})
    assert small.output == "paid 50"
    _, _, big = await start(wf_of(pay), state={"amount": 500})
    assert big.status == SessionStatus.WAITING
    assert calls(big.events)[0].args["payload"]["args"] == {"amount": 500}


async def test_require_confirmation_predicate_on_node_input():
    @node(require_confirmation=lambda node_input: node_input == "risky")
    def act(node_input):
        return node_input

    _, _, safe = await start(wf_of(act), "safe")
    assert safe.output == "safe"
    _, _, risky = await start(wf_of(act), "risky")
    assert risky.status == SessionStatus.WAITING


# -- state prefixes -------------------------------------------------------------------------


async def test_app_user_and_temp_state_prefixes():
    def write(ctx, node_input):
        ctx.state["app:visits"] = ctx.state.get("app:visits", 0) + 1
        ctx.state["user:name"] = node_input
        ctx.state["temp:scratch"] = "only now"
        ctx.state["mine"] = node_input
        yield Event(message="written")

    def read(ctx):
        return {
            "app": ctx.state.get("app:visits"),
            "user": ctx.state.get("user:name"),
            "temp": ctx.state.get("temp:scratch"),
        }

    store = InMemoryStore()
    wf = wf_of(write, read)
    runner = Runner(wf, store)
    ada = await runner.create_session(user_id="ada")
    first = await runner.run(ada.id, "Ada")
    # temp: is visible to later nodes of the same run...
    assert first.output == {"app": 1, "user": "Ada", "temp": "only now"}
    # ...but never stored: not in session state, not in stored events
    assert first.session.state == {"mine": "Ada"}
    stored = await store.list_events(ada.id)
    assert all(not k.startswith("temp:") for e in stored for k in e.state_delta)

    ada2 = await runner.create_session(user_id="ada")
    bob = await runner.create_session(user_id="bob")
    reader = Runner(wf_of(read), store, app_name="wf")
    assert (await reader.run(ada2.id, "")).output == {"app": 1, "user": "Ada", "temp": None}
    assert (await reader.run(bob.id, "")).output == {"app": 1, "user": None, "temp": None}
    await runner.run(bob.id, "Bob")
    assert await store.get_shared_state("wf", "bob") == {"app:visits": 2, "user:name": "Bob"}
    assert await store.get_shared_state("wf", "ada") == {"app:visits": 2, "user:name": "Ada"}
