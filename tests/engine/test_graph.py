"""Graphs: edge forms, routes of every type, DEFAULT_ROUTE, loops, and validation at construction."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from engine import DEFAULT_ROUTE, START, Edge, Event, FunctionNode, GraphError, SessionStatus, Workflow, node
from tests.engine.helpers import outputs, paths, start, texts


def mark(name: str, *, route=None, output=None):
    """A node that says its name, optionally emits a route, and outputs ``output`` (or its input)."""

    def body(node_input=None):
        yield Event(message=name)
        if route is not None:
            yield Event(route=route)
        yield output if output is not None else node_input

    return FunctionNode(body, name=name)


# -- edge forms -----------------------------------------------------------------------------


async def test_it_runs_a_chain_in_order_and_outputs_the_terminal_output():
    wf = Workflow("wf", edges=[(START, mark("a", output=1), mark("b", output=2), mark("c", output=3))])
    _, _, result = await start(wf)
    assert result.status == SessionStatus.COMPLETED
    assert texts(result.events) == ["a", "b", "c"]
    assert paths(result.events) == ["wf@1/a@1", "wf@1/b@1", "wf@1/c@1"]
    assert result.output == 3


async def test_it_passes_each_output_as_the_next_node_input():
    def double(node_input: int) -> int:
        return node_input * 2

    def add_one(node_input: int) -> int:
        return node_input + 1

    wf = Workflow("wf", edges=[("START", double, add_one)])
    _, _, result = await start(wf, 5)
    assert result.output == 11


async def test_it_accepts_edge_objects_and_names_defined_elsewhere():
    a, b, c = mark("a", route="go"), mark("b"), mark("c")
    wf = Workflow("wf", edges=[Edge(START, a), Edge(a, "b", route="go"), (b, c), Edge("c", "b", route="again")])
    _, _, result = await start(wf)
    assert texts(result.events) == ["a", "b", "c"]


async def test_a_tuple_fans_out_to_every_node_on_its_own_branch():
    wf = Workflow("wf", edges=[(START, (mark("a"), mark("b")), mark("c"))])
    _, _, result = await start(wf, "in")
    assert sorted(texts(result.events)) == ["a", "b", "c", "c"]
    branches = {e.node_info.path: e.branch for e in result.events if e.node_info.path}
    assert branches["wf@1/a@1"] == "a@1"
    assert branches["wf@1/b@1"] == "b@1"
    # without a join, c runs once per arriving branch
    assert {"wf@1/c@1", "wf@1/c@2"} <= set(branches)


async def test_a_route_dict_with_a_tuple_target_fans_out():
    wf = Workflow("wf", edges=[(START, mark("a", route="both"), {"both": (mark("b"), mark("c"))})])
    _, _, result = await start(wf)
    assert sorted(texts(result.events)) == ["a", "b", "c"]


# -- routes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "taken"),
    [
        ("yes", "on_str"),
        (True, "on_bool"),
        (7, "on_int"),
        (["nothing", 7], "on_int"),
    ],
)
async def test_routes_of_every_type_select_their_edge(route, taken):
    wf = Workflow(
        "wf",
        edges=[
            (START, mark("src", route=route)),
            (
                "src",
                {"yes": mark("on_str"), True: mark("on_bool"), 7: mark("on_int")},
            ),
        ],
    )
    _, _, result = await start(wf)
    assert texts(result.events) == ["src", taken]


async def test_an_edge_tagged_with_a_list_fires_on_any_of_its_routes():
    for route in ("a", "b"):
        src = mark("src", route=route)
        wf = Workflow("wf", edges=[(START, src), Edge(src, mark("dst"), route=["a", "b"])])
        _, _, result = await start(wf)
        assert texts(result.events) == ["src", "dst"]


async def test_a_bool_route_does_not_fire_an_int_edge():
    wf = Workflow("wf", edges=[(START, mark("src", route=True)), ("src", {1: mark("one")})])
    _, _, result = await start(wf)
    assert texts(result.events) == ["src"]


async def test_default_route_fires_only_when_no_routed_edge_matched():
    def build(route):
        return Workflow(
            "wf",
            edges=[(START, mark("src", route=route)), ("src", {"x": mark("on_x"), DEFAULT_ROUTE: mark("fallback")})],
        )

    _, _, result = await start(build("x"))
    assert texts(result.events) == ["src", "on_x"]
    _, _, result = await start(build("other"))
    assert texts(result.events) == ["src", "fallback"]
    _, _, result = await start(build(None))
    assert texts(result.events) == ["src", "fallback"]


async def test_unrouted_edges_always_fire_alongside_routed_ones():
    src = mark("src", route="x")
    wf = Workflow("wf", edges=[(START, src, mark("always")), (src, {"x": mark("on_x"), "y": mark("on_y")})])
    _, _, result = await start(wf)
    assert sorted(texts(result.events)) == ["always", "on_x", "src"]


async def test_a_route_with_no_edge_ends_its_branch_with_a_warning(caplog):
    wf = Workflow("wf", edges=[(START, mark("src", route="nowhere"), {"x": mark("on_x")})])
    with caplog.at_level(logging.WARNING, logger="engine"):
        _, _, result = await start(wf)
    assert result.status == SessionStatus.COMPLETED
    assert texts(result.events) == ["src"]
    assert "matches none of its edges" in caplog.text


# -- loops ----------------------------------------------------------------------------------


async def test_a_routed_back_edge_loops_with_new_run_ids():
    def counter(ctx, node_input=None):
        n = ctx.state.get("n", 0) + 1
        ctx.state["n"] = n
        yield Event(route="again" if n < 3 else "done")
        yield n

    work = FunctionNode(counter, name="work")
    check = mark("check")
    wf = Workflow("wf", edges=[(START, work), (work, {"again": check, "done": mark("end")}), (check, work)])
    _, _, result = await start(wf)
    assert paths(result.events) == [
        "wf@1/work@1",
        "wf@1/check@1",
        "wf@1/work@2",
        "wf@1/check@2",
        "wf@1/work@3",
        "wf@1/end@1",
    ]
    assert outputs(result.events)["wf@1/end@1"] == 3


async def test_a_self_loop_gives_each_activation_its_own_run_id():
    @node
    def guess(ctx):
        n = ctx.state.get("tries", 0) + 1
        ctx.state["tries"] = n
        yield Event(message=f"try {n}")
        if n < 4:
            yield Event(route="wrong")

    wf = Workflow("wf", edges=[(START, guess), (guess, {"wrong": guess})])
    _, _, result = await start(wf)
    assert texts(result.events) == ["try 1", "try 2", "try 3", "try 4"]
    assert paths(result.events) == [f"wf@1/guess@{n}" for n in range(1, 5)]


# -- validation -----------------------------------------------------------------------------


def a_node(name):
    return FunctionNode(lambda: None, name=name)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda a, b, c: [(START, a, b), (b, a)], "Unconditional cycle"),
        (lambda a, b, c: [(START, a), (a, a)], "Unconditional cycle"),
        (lambda a, b, c: [(START, a, b), (START, a_node("a"))], "Duplicate node name 'a'"),
        (lambda a, b, c: [(START, a), (b, c)], "unreachable from START: b, c"),
        (lambda a, b, c: [(START, a), (a, START)], "nothing may lead into START"),
        (lambda a, b, c: [(START, a, b), (a, b)], "Duplicate edge 'a' → 'b'"),
        (lambda a, b, c: [(START, a), (a, {"x": "missing"})], "Unknown route target 'missing'"),
        (lambda a, b, c: [Edge(START, a, route="x")], "START edges cannot be routed"),
        (lambda a, b, c: [(START, a), Edge(a, b, route=["x", DEFAULT_ROUTE])], "DEFAULT_ROUTE cannot be part"),
        (lambda a, b, c: [(START, a), Edge(a, b, route=[])], "empty route list"),
        (lambda a, b, c: [], "at least one edge"),
        (lambda a, b, c: [(a, b)], "No edge leaves START"),
        (lambda a, b, c: [a], "chain tuple of two or more"),
        (lambda a, b, c: [(START, a, {1.5: b})], "must be a str, bool or int"),
        (lambda a, b, c: [(START, a, {"x": b}, {"y": c})], "Two route dicts in a row"),
        (lambda a, b, c: [(START, a, {})], "at least one route"),
    ],
)
def test_invalid_graphs_are_refused_at_construction_with_a_clear_message(build, message):
    a, b, c = a_node("a"), a_node("b"), a_node("c")
    with pytest.raises(GraphError, match=message) as info:
        Workflow("wf", edges=build(a, b, c))
    assert info.value.code == "graph_invalid"


def test_an_unconditional_cycle_message_names_the_cycle():
    a, b, c = a_node("a"), a_node("b"), a_node("c")
    with pytest.raises(GraphError) as info:
        Workflow("wf", edges=[(START, a, b, c), (c, a)])
    assert "a → b → c → a" in str(info.value)


def test_a_cycle_with_a_routed_edge_is_a_valid_loop():
    a, b = a_node("a"), a_node("b")
    Workflow("wf", edges=[(START, a, b), (b, {"again": a})])


def test_the_same_function_twice_is_one_node():
    def step():
        return None

    wf = Workflow("wf", edges=[(START, step), (step, {"again": step})])
    assert list(wf.graph.nodes) == ["step"]


def test_a_node_named_start_is_refused():
    with pytest.raises(GraphError, match="reserved"):
        Workflow("wf", edges=[(START, a_node("START"))])


def test_a_schema_mismatch_on_an_edge_is_refused():
    class A(BaseModel):
        x: int

    class B(BaseModel):
        y: int

    src = FunctionNode(lambda: {"x": 1}, name="src", output_schema=A)
    ok = FunctionNode(lambda node_input: None, name="ok", input_schema=A)
    bad = FunctionNode(lambda node_input: None, name="bad", input_schema=B)
    Workflow("wf", edges=[(START, src, ok)])
    with pytest.raises(GraphError, match="Schema mismatch on edge 'src' → 'bad'"):
        Workflow("wf", edges=[(START, src, bad)])


def test_the_graph_knows_terminal_nodes_and_predecessors():
    a, b, c = a_node("a"), a_node("b"), a_node("c")
    wf = Workflow("wf", edges=[(START, a, (b, c))])
    assert wf.graph.terminal == frozenset({"b", "c"})
    assert wf.graph.predecessors["b"] == ["a"]
    assert wf.graph.start_targets == ["a"]
