"""The files ``manage.py startworkflow`` writes: a workflow package, its ``WORKFLOWS`` and its test.

``scaffold(name, directory)`` writes ``<directory>/<package>/`` (``package`` is ``name`` with
``-`` as ``_``): ``__init__.py`` (the ``WORKFLOWS`` list of one
:class:`reviewconsole.workflows.WorkflowSpec`), ``workflow.py`` (its input model and a small
workflow that asks a person to approve or reject through one ``RequestInput``) and
``tests/test_workflow.py`` (run with :mod:`reviewconsole.testing`, plain pytest). The generated
test passes as generated (``tests/console/test_startworkflow.py`` runs it).
"""

from __future__ import annotations

import importlib.util
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

__all__ = ["Scaffold", "ScaffoldError", "scaffold"]

NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


class ScaffoldError(ValueError):
    """The name cannot be used, or the package's folder exists already; nothing was written."""


@dataclass(frozen=True)
class Scaffold:
    """What was written: the workflow's ``name``, its ``package`` (module name), the folder the
    package was written in (``directory``, absolute) and the files, relative to it."""

    name: str
    package: str
    directory: Path
    files: list[str]


INIT = '''"""$title: a workflow package for reviewconsole.

Register it by its module name, ``$package`` (its folder must be importable, e.g. on PYTHONPATH)::

    REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,$package   # environment; drop reviewconsole.demo to hide the demos
    REVIEWCONSOLE["WORKFLOWS"] = ["$package"]              # or in the Django settings

or, in an installed distribution's ``pyproject.toml``::

    [project.entry-points."reviewconsole.workflows"]
    $package = "$package"
"""

from reviewconsole.workflows import WorkflowSpec

from . import workflow

WORKFLOWS = [
    WorkflowSpec(
        name="$name",
        title="$title",
        kind="approval",
        queue="$name",
        build=workflow.build,
        input_schema=workflow.RequestData,
        description="A request a person approves or rejects.",
    ),
]
'''

WORKFLOW = '''"""The $name workflow: a person approves or rejects a request.

START → record_request → ask_approval (a ``RequestInput``: the inbox shows Approve and Reject) →
decide, then ``approved`` → approve or ``rejected`` → reject. Change it: add nodes, agents
(``engine.LlmAgent``) and tools; ``docs/workflows.md`` of reviewconsole walks through it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engine import Event, RequestInput, Workflow
from reviewconsole.workflows.answers import read_review


class RequestData(BaseModel):
    """What starts a session: the New request form, a webhook's body or an API call's input."""

    subject: str = Field(min_length=1, max_length=200, description="What is asked for.")
    details: str = Field(default="", max_length=5000, description="Anything the reviewer should know.")


def record_request(node_input: Any) -> Event:
    """Keep the request in the session's state."""
    return Event(state={"request": dict(node_input)})


def ask_approval(request: dict[str, Any]) -> RequestInput:
    """Ask a person: the answer is ``approve`` or ``reject``."""
    return RequestInput(
        message=f"Approve this request? {request['subject']}\\n\\n{request.get('details', '')}".strip(),
        payload={"request": request},
        metadata={"actions": ["approve", "reject"]},
    )


def decide(node_input: Any) -> Event:
    """Route on the answer, read as the console's doors read it (``read_review``): ``approve``
    approves; ``reject`` (or ``{"result": "reject", "reason": …}``) and a timeout reject."""
    decision = read_review(node_input)
    approved = decision is not None and decision.action == "approve"
    return Event(route="approved" if approved else "rejected")


def approve(request: dict[str, Any]) -> Event:
    return Event(message=f"Approved: {request['subject']}", output={"approved": True, "subject": request["subject"]})


def reject(request: dict[str, Any]) -> Event:
    return Event(message=f"Rejected: {request['subject']}", output={"approved": False, "subject": request["subject"]})


def build(model: Any = None) -> Workflow:
    """The workflow (it calls no model; an ``LlmAgent`` added here gets ``model``).

    Raise ``version`` when a change would not resume sessions paused under the old graph, and
    keep the old builder in the spec's ``previous`` until those sessions are done.
    """
    return Workflow(
        "$package",
        edges=[
            ("START", record_request, ask_approval, decide),
            (decide, {"approved": approve, "rejected": reject}),
        ],
        input_schema=RequestData,
        version="1",
    )
'''

TEST = '''"""The $name workflow, run with reviewconsole's testing kit (plain pytest, no Django)."""

import pytest

from engine import WorkflowDataError
from reviewconsole.testing import run_workflow

from .. import WORKFLOWS

SPEC = WORKFLOWS[0]
REQUEST = {"subject": "A new laptop", "details": "The old one broke."}


def test_an_approved_request_completes():
    run = run_workflow(SPEC, REQUEST)
    run.assert_waiting(kind="input", count=1)
    assert "A new laptop" in run.interrupt().message
    run.answer("approve")
    run.assert_route("record_request", "ask_approval", "decide", "approve")
    run.assert_outcome("completed", output={"approved": True, "subject": "A new laptop"})
    assert run.messages[-1] == "Approved: A new laptop"


def test_a_rejected_request_ends_rejected():
    run = run_workflow(SPEC, REQUEST).answer("reject", kind="input")
    run.assert_route("record_request", "ask_approval", "decide", "reject")
    run.assert_outcome("completed", output={"approved": False, "subject": "A new laptop"})


def test_a_request_without_a_subject_is_refused():
    with pytest.raises(WorkflowDataError) as refused:
        run_workflow(SPEC, {"subject": ""})
    assert refused.value.details["errors"][0]["path"] == ["subject"]
'''


def _check(name: str, directory: Path) -> str:
    if not NAME.match(name) or len(name) > 100:
        raise ScaffoldError(
            f"{name!r} is not a workflow name: use lower-case letters, digits and single hyphens, "
            "starting with a letter (e.g. expense-claim)."
        )
    package = name.replace("-", "_")
    if keyword.iskeyword(package):
        raise ScaffoldError(f"{package!r} is a Python keyword: choose another name.")
    try:
        taken = importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        taken = True
    if taken:
        raise ScaffoldError(f"A module named {package!r} exists already (it would be shadowed): choose another name.")
    if (directory / package).exists():
        raise ScaffoldError(f"{directory / package} exists already; nothing was written.")
    return package


def scaffold(name: str, directory: Path) -> Scaffold:
    """Write the package of workflow ``name`` in ``directory`` (created if missing).

    Raises:
        ScaffoldError: ``name`` is not a URL-safe workflow name, its package name is a keyword or
            an importable module already, or the folder exists; nothing is written.
    """
    directory = directory.resolve()
    package = _check(name, directory)
    values = {"name": name, "package": package, "title": name.replace("-", " ").capitalize()}
    files = {
        f"{package}/__init__.py": INIT,
        f"{package}/workflow.py": WORKFLOW,
        f"{package}/tests/__init__.py": "",
        f"{package}/tests/test_workflow.py": TEST,
    }
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(values), encoding="utf-8")
    return Scaffold(name=name, package=package, directory=directory, files=list(files))
