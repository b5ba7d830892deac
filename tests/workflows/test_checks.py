"""System checks of the registry: each broken module or spec is an error naming the module and the
workflow and saying what to fix; ``check``, ``serve`` and ``worker`` refuse to go on."""

from __future__ import annotations

import textwrap

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from reviewconsole.workflows.checks import check_registry

GOOD = """
from pydantic import BaseModel
from reviewconsole.workflows import Event, Workflow, WorkflowSpec

class Start(BaseModel):
    text: str = ""

def hello(node_input):
    return Event(message="hello")

def build(model=None):
    return Workflow("{name}", edges=[("START", hello)], input_schema=Start)

WORKFLOWS = [WorkflowSpec(name="{name}", title="Hello", queue="hello", build=build, input_schema=Start)]
"""


def _good(name):
    return textwrap.dedent(GOOD).format(name=name)


def _errors(write_module, register, *modules):
    """The registry's check errors with ``modules`` registered, as ``(id, message, hint, obj)``."""
    names = [write_module(name, source) for name, source in modules]
    register(*names)
    return [(e.id, e.msg, e.hint, e.obj) for e in check_registry()]


def _one(write_module, register, name, source):
    [error] = _errors(write_module, register, (name, source))
    return error


def test_a_sound_registry_has_no_errors(write_module, register):
    assert _errors(write_module, register, ("hello_flows", _good("hello"))) == []
    register("reviewconsole.demo")
    assert check_registry() == []


def test_a_module_that_does_not_import_says_why(write_module, register):
    code, msg, hint, obj = _one(write_module, register, "broken_flows", "import no_such_dependency_here\n")
    assert code == "reviewconsole.workflows.E001"
    assert msg == (
        "Workflow module 'broken_flows' (REVIEWCONSOLE['WORKFLOWS']) does not import: "
        "ModuleNotFoundError: No module named 'no_such_dependency_here'"
    )
    assert "remove it from REVIEWCONSOLE['WORKFLOWS']" in hint
    assert obj == "broken_flows"


def test_a_module_that_raises_on_import_gives_the_exception_message(write_module, register):
    _, msg, _, _ = _one(write_module, register, "raising_flows", "raise RuntimeError('set ACME_URL first')\n")
    assert msg.endswith("does not import: RuntimeError: set ACME_URL first")


def test_a_module_that_is_not_there(register):
    register("reviewconsole.no_such_module")
    [error] = check_registry()
    assert error.id == "reviewconsole.workflows.E001"
    assert "'reviewconsole.no_such_module'" in error.msg


def test_a_module_without_workflows(write_module, register):
    code, msg, hint, _ = _one(write_module, register, "empty_flows", "X = 1\n")
    assert (code, msg) == (
        "reviewconsole.workflows.E002",
        "Workflow module 'empty_flows' has no module-level WORKFLOWS.",
    )
    assert hint.startswith("Add WORKFLOWS = [WorkflowSpec(")


def test_workflows_that_is_not_a_list(write_module, register):
    code, msg, _, _ = _one(write_module, register, "dict_flows", "WORKFLOWS = {'a': 1}\n")
    assert (code, msg) == (
        "reviewconsole.workflows.E003",
        "WORKFLOWS in 'dict_flows' is a dict, not a list of WorkflowSpec.",
    )


def test_a_workflows_item_that_is_not_a_spec(write_module, register):
    source = _good("hello") + "WORKFLOWS = [*WORKFLOWS, {'name': 'x'}]\n"
    code, msg, _, _ = _one(write_module, register, "mixed_flows", source)
    assert (code, msg) == (
        "reviewconsole.workflows.E003",
        "WORKFLOWS[1] in 'mixed_flows' is a dict, not a WorkflowSpec.",
    )


def test_duplicate_names_across_modules(write_module, register):
    errors = _errors(write_module, register, ("first_flows", _good("hello")), ("second_flows", _good("hello")))
    [(code, msg, hint, obj)] = errors
    assert code == "reviewconsole.workflows.E004"
    assert msg == "Workflow 'hello' is registered twice: by 'first_flows' and by 'second_flows'."
    assert hint.startswith("Rename one of them") and obj == "second_flows"


def test_a_name_that_is_not_url_safe(write_module, register):
    source = _good("hello").replace('WorkflowSpec(name="hello"', 'WorkflowSpec(name="Purchase order/v2"')
    code, msg, hint, _ = _one(write_module, register, "spaced_flows", source)
    assert code == "reviewconsole.workflows.E005"
    assert msg == "Workflow 'Purchase order/v2' in 'spaced_flows': its name 'Purchase order/v2' is not URL-safe."
    assert "letters, digits, hyphens or underscores" in hint


def test_a_queue_that_is_not_url_safe(write_module, register):
    source = _good("hello").replace('queue="hello"', 'queue="the queue"')
    code, msg, _, _ = _one(write_module, register, "queue_flows", source)
    assert (code, msg) == (
        "reviewconsole.workflows.E005",
        "Workflow 'hello' in 'queue_flows': its queue 'the queue' is not URL-safe.",
    )


def test_a_build_that_raises(write_module, register):
    source = _good("hello") + "def build(model=None):\n    raise KeyError('ACME_TOKEN')\n"
    source += "WORKFLOWS = [WorkflowSpec(name='hello', title='H', queue='hello', build=build, input_schema=Start)]\n"
    code, msg, hint, _ = _one(write_module, register, "raising_build", source)
    assert code == "reviewconsole.workflows.E006"
    assert msg == "Workflow 'hello' in 'raising_build': build() raised KeyError: 'ACME_TOKEN'"
    assert "called with model=None" in hint


def test_a_build_that_returns_no_node(write_module, register):
    source = _good("hello").replace("build=build", "build=lambda model=None: 'a graph'")
    code, msg, _, _ = _one(write_module, register, "string_build", source)
    assert (code, msg) == (
        "reviewconsole.workflows.E006",
        "Workflow 'hello' in 'string_build': build() returned a str, not an engine node.",
    )


def test_a_graph_that_does_not_validate_gives_the_engines_message(write_module, register):
    source = _good("hello").replace('edges=[("START", hello)]', 'edges=[("START", hello), (hello, {"x": "nowhere"})]')
    code, msg, hint, _ = _one(write_module, register, "bad_graph", source)
    assert code == "reviewconsole.workflows.E007"
    assert msg == (
        "Workflow 'hello' in 'bad_graph': the graph of build() does not validate: "
        "Unknown route target 'nowhere': no node with that name is in the graph."
    )
    assert hint == "Fix the edges or nodes it names."


def test_an_earlier_version_that_does_not_build_is_reported_too(write_module, register):
    source = _good("hello").replace("input_schema=Start)]", "input_schema=Start, previous=(lambda m=None: 1 / 0,))]")
    code, msg, _, _ = _one(write_module, register, "old_version", source)
    assert (code, msg) == (
        "reviewconsole.workflows.E006",
        "Workflow 'hello' in 'old_version': previous[0]() raised ZeroDivisionError: division by zero",
    )


def test_a_missing_input_schema(write_module, register):
    source = _good("hello").replace("build=build, input_schema=Start)", "build=build)")
    code, msg, hint, _ = _one(write_module, register, "no_schema", source)
    assert (code, msg) == ("reviewconsole.workflows.E008", "Workflow 'hello' in 'no_schema' has no input_schema.")
    assert hint.startswith("Set input_schema= to a pydantic model")


def test_a_setting_that_is_not_a_list(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WORKFLOWS": "reviewconsole.demo"}
    [error] = check_registry()
    assert error.id == "reviewconsole.workflows.E010"
    assert error.msg == "REVIEWCONSOLE['WORKFLOWS'] must be a list of dotted module paths, not str."


def test_an_entry_point_that_names_an_attribute(tmp_path, monkeypatch, register):
    """A real distribution's metadata (``dist-info``), found by importlib.metadata on sys.path."""
    info = tmp_path / "acme_flows-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-flows\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[reviewconsole.workflows]\nacme = acme_flows:WORKFLOWS\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register("reviewconsole.demo")
    [error] = check_registry()
    assert error.id == "reviewconsole.workflows.E009"
    assert error.msg == (
        "The entry point 'acme' of acme-flows names 'acme_flows:WORKFLOWS', an attribute: it must name a module."
    )
    assert error.hint.endswith("e.g. acme = 'acme_flows'.")


def test_the_valid_specs_of_a_broken_registry_still_load(write_module, register):
    from reviewconsole.workflows import get

    _errors(write_module, register, ("fine_flows", _good("fine")), ("broken_too", "import nothing_here_either\n"))
    assert get("fine").title == "Hello"


# -- the commands refuse to start ------------------------------------------------------------


@pytest.fixture
def broken(db, write_module, register):
    register(write_module("startup_flows", "import missing_at_startup\n"))


def test_manage_py_check_fails_on_a_broken_registry(broken):
    with pytest.raises(SystemCheckError) as info:
        call_command("check")
    assert "reviewconsole.workflows.E001" in str(info.value)
    assert "No module named 'missing_at_startup'" in str(info.value)


def test_serve_refuses_to_start(broken, monkeypatch):
    from daphne.server import Server

    monkeypatch.setattr(Server, "run", lambda self: pytest.fail("served despite a broken registry"))
    with pytest.raises(SystemCheckError, match="missing_at_startup"):
        call_command("serve", "--no-migrate")


def test_worker_refuses_to_start(broken, monkeypatch):
    from reviewconsole.console.worker import ThreadWorker

    monkeypatch.setattr(ThreadWorker, "start", lambda self: pytest.fail("started despite a broken registry"))
    with pytest.raises(SystemCheckError, match="missing_at_startup"):
        call_command("worker")


BAD_POLICY = """
from pydantic import BaseModel
from reviewconsole.workflows import ApprovalPolicy, Event, Workflow, WorkflowSpec

class Start(BaseModel):
    text: str = ""

def hello(node_input):
    return Event(message="hello")

def build(model=None):
    return Workflow("paid", edges=[("START", hello)], input_schema=Start)

WORKFLOWS = [WorkflowSpec(name="paid", title="Paid", queue="hello", build=build, input_schema=Start, policies=(
    ApprovalPolicy(name="small", tool="pay", when="args.amount <= ", decide="approve"),
    ApprovalPolicy(name="small", tool="pay", when="true"),
))]
"""


def test_an_unusable_approval_policy_is_an_error_naming_the_rule(write_module, register):
    errors = _errors(write_module, register, ("paid_flows", textwrap.dedent(BAD_POLICY)))
    assert [e[0] for e in errors] == ["reviewconsole.workflows.E011"] * 2
    assert errors[0][1].startswith(
        "Workflow 'paid' in 'paid_flows': Approval policy 'small', when: "
        "The condition 'args.amount <= ' is not valid CEL"
    )
    assert errors[1][1] == "Workflow 'paid' in 'paid_flows': approval policy 'small' is declared twice."
    assert "CEL over args (the tool's parameters) and state" in errors[0][2]


MISSPELT_POLICIES = """
from pydantic import BaseModel
from reviewconsole.workflows import ApprovalPolicy, FunctionTool, LlmAgent, Workflow, WorkflowSpec

class Start(BaseModel):
    text: str = ""

class Line(BaseModel):
    sku: str
    price: float

class Shared(BaseModel):
    tier: str = ""

def pay(amount: float, lines: list[Line]) -> str:
    \"\"\"Pay.\"\"\"
    return "paid"

def build(model=None):
    agent = LlmAgent("payer", model=model, tools=[FunctionTool(pay, require_confirmation=True)], input_schema=Start)
    return Workflow("paid", edges=[("START", agent)], input_schema=Start, state_schema=Shared)

WORKFLOWS = [WorkflowSpec(name="paid", title="Paid", queue="hello", build=build, input_schema=Start, policies=(
    ApprovalPolicy(name="amount", tool="pay", when="args.amont > 5.0", decide="approve"),
    ApprovalPolicy(name="element", tool="pay", when="args.lines.exists(x, x.prce > 100.0)"),
    ApprovalPolicy(name="state", tool="*", when='state.tierr == "vip"', decide="approve"),
    ApprovalPolicy(name="tool", tool="pya", when="true"),
    ApprovalPolicy(name="good", tool="pay", when='args.lines.exists(x, x.price > 100.0) && state.tier != "vip"'),
    ApprovalPolicy(name="any-tool", tool="*", four_eyes_over="args.amount > 1000.0"),
))]
"""


def test_an_approval_policy_reading_an_undeclared_name_is_an_error_naming_it(write_module, register):
    """E011 checks what a rule reads: the tool's parameters (also an element's fields inside a list
    macro), the workflow's state_schema, and that the tool is one of the workflow's."""
    errors = _errors(write_module, register, ("misspelt_flows", textwrap.dedent(MISSPELT_POLICIES)))
    assert [e[0] for e in errors] == ["reviewconsole.workflows.E011"] * 4
    prefix = "Workflow 'paid' in 'misspelt_flows': Approval policy"
    messages = [e[1] for e in errors]
    assert messages[0].startswith(f"{prefix} 'amount', when: The condition 'args.amont > 5.0' reads what is not")
    assert "args.amont (the parameters of pay: amount, lines)" in messages[0]
    assert "x.prce (the fields of args.lines[]: price, sku)" in messages[1]
    assert "state.tierr (the keys of its state_schema: tier)" in messages[2]
    assert messages[3] == (
        f"{prefix} 'tool': tool 'pya' is not a tool of workflow 'paid' (its tools: pay; or '*' for every tool)."
    )
