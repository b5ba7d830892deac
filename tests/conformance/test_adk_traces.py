"""Every ADK trace (``adk/`` and ``adk-extra/``) replays through our engine (ADK's comparison plus
per-node order). A trace folder without a builder fails the run instead of being dropped."""

import pytest

from tests.conformance.adk_extra_samples import EXTRA_BUILDERS
from tests.conformance.adk_samples import BUILDERS as ADK_BUILDERS
from tests.conformance.harness import (
    EXTRA_TRACES,
    SHARED,
    TRACES,
    assert_matches,
    load_trace,
    replay,
    scripted_responses,
)

BUILDERS = {**ADK_BUILDERS, **EXTRA_BUILDERS}
WHERE = "tests/conformance/adk_samples.py or adk_extra_samples.py"
pytestmark = pytest.mark.usefixtures("adk_traces")  # skipped, naming the folder, without ../shared

REPLAYED_ELSEWHERE = {"request_input": "tests/conformance/test_request_input.py (the product's email review)"}
"""Trace folders replayed by another test, with the product's own workflow."""
STRUCTURAL = {"node_as_tool"}
"""Folders ADK's runner itself skips (see test_node_as_tool_has_the_structure_of_its_trace)."""


def _trace_names() -> list[str]:
    paths = [*TRACES.glob("*/*.json"), *EXTRA_TRACES.glob("*/*.json")]
    return sorted(str(p.relative_to(SHARED / "conformance")) for p in paths)


def _builder_key(name: str) -> str:
    """``adk/loop/flower.json`` -> ``loop``; ``adk-extra/retry/go.json`` -> ``adk-extra/retry``."""
    corpus, folder, _ = name.split("/")
    return folder if corpus == "adk" else f"{corpus}/{folder}"


CASES = [n for n in _trace_names() if n.split("/")[1] not in REPLAYED_ELSEWHERE.keys() | STRUCTURAL] or [
    pytest.param("", id="no-traces")  # (the fixture skips it, saying which folder is missing)
]


def test_all_thirty_six_traces_are_present():
    """The traces come from ../shared: present, all of them (skipped without ../shared, see conftest)."""
    assert len(list(TRACES.glob("*/*.json"))) == 16, f"expected 16 ADK traces under {TRACES}"
    assert len(list(EXTRA_TRACES.glob("*/*.json"))) == 20, f"expected 20 ADK traces under {EXTRA_TRACES}"


def test_every_trace_folder_has_a_builder():
    """A trace folder nobody builds a workflow for fails here, naming it, instead of being skipped."""
    missing = sorted(
        {_builder_key(n) for n in _trace_names() if n.split("/")[1] not in REPLAYED_ELSEWHERE} - BUILDERS.keys()
    )
    assert not missing, (
        f"trace folders without a builder (tests/conformance/adk_samples.py, adk_extra_samples.py): {missing}"
    )


@pytest.mark.parametrize("name", CASES)
async def test_trace_replays(name):
    key = _builder_key(name)
    assert key in BUILDERS, (
        f"no builder for the trace folder {key} (tests/conformance/adk_samples.py, adk_extra_samples.py)"
    )
    trace = load_trace(name)
    events, model = await replay(trace, BUILDERS[key])
    assert_matches(trace, events)
    assert model.calls == len(model.responses), "every scripted model response was used"


def _as_2_5_path(path: str) -> str:
    """ADK 2.13 nests a node tool's run under its agent (``agent@1/tool@<call id>``); 2.5 did not."""
    _, _, rest = path.partition("/")
    if not rest:
        return path
    tool, _, inner = rest.partition("/")
    name = tool.split("@")[0]
    return f"{name}@1" + (f"/{inner}" if inner else "")


async def test_node_as_tool_has_the_structure_of_its_trace():
    """ADK's runner skips this trace (no opening message, events out of time order); compare its structure."""
    trace = load_trace("node_as_tool/go.json")
    by_name = {c.function_calls()[0].name if c.function_calls() else "text": c for c in scripted_responses(trace)}
    in_time_order = [by_name["customer_lookup_workflow"], by_name["calculate_discount"], by_name["text"]]
    trace.events.insert(0, {"author": "user", "content": {"role": "user", "parts": [{"text": "c123"}]}})
    events, model = await replay(trace, BUILDERS["node_as_tool"], responses=in_time_order, ids_in_time_order=True)
    for event in events:
        event.node_info.path = _as_2_5_path(event.node_info.path)
        if event.node_info.output_for:
            event.node_info.output_for = [_as_2_5_path(p) for p in event.node_info.output_for]
    assert_matches(trace, events, check_order=False)
    assert model.calls == 3
