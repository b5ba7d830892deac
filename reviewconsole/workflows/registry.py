"""Loading the registry: which modules register workflows, their specs, and what is wrong with them.

Sources, in this order (a module named twice is loaded once):

0. :data:`BUILTIN`, the console's own review-request workflow (``review.py``), always, first
   (not listed in ``Registry.sources``: it is no setting's or distribution's).
1. ``settings.REVIEWCONSOLE["WORKFLOWS"]``: a list of dotted module paths. The settings read it
   from ``$REVIEWCONSOLE_WORKFLOWS`` (comma-separated), which replaces the default list
   (``["reviewconsole.demo"]`` on the embedded and test settings, ``[]`` in production); see
   ``reviewconsole/settings/env.py``. Without Django settings (a script) the same environment
   variables are read here, with the embedded default.
2. Entry points of the group ``reviewconsole.workflows`` (:data:`ENTRY_POINT_GROUP`) of installed
   distributions, each naming a module: ``[project.entry-points."reviewconsole.workflows"]``
   ``acme = "acme_workflows"`` in the distribution's ``pyproject.toml``.

Each module exposes a module-level list (or tuple) ``WORKFLOWS`` of
:class:`~reviewconsole.workflows.WorkflowSpec`. :func:`load` imports every module and keeps every
valid spec; whatever is wrong becomes a :class:`Problem` (the module, the workflow, what is wrong,
what to do), which the system checks (``checks.py``) report as errors so that nothing starts
with a broken registry. :func:`build_problems` also builds each spec (with ``model=None``) to
find builders that raise, graphs that do not validate and missing input schemas: the checks call
it, :func:`load` does not, so loading stays cheap. The loaded registry is kept until
:func:`forget` (a change of ``settings.REVIEWCONSOLE`` calls it, see ``apps.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from engine import BaseNode, GraphError

from . import ARRIVAL_POLICIES, ApprovalPolicy, WorkflowSpec
from .policy_scope import spec_rule_error

__all__ = [
    "ENTRY_POINT_GROUP",
    "Problem",
    "Registry",
    "Source",
    "build_problems",
    "configured_modules",
    "current",
    "forget",
    "load",
]

logger = logging.getLogger("reviewconsole.workflows")

ENTRY_POINT_GROUP = "reviewconsole.workflows"
SETTING = "REVIEWCONSOLE['WORKFLOWS']"
NAME_RE = re.compile(r"[-a-zA-Z0-9_]+\Z")
"""URL-safe names, as Django's slugs: the name is part of ``/hooks/…``, ``/agui/<name>/`` and the API."""
MAX_NAME = 100
"""Longest name or queue slug (the ``workflow`` and ``slug`` columns hold 100 characters)."""


@dataclass(frozen=True)
class Source:
    """A module to load and where it was named (``origin``: the setting, or an entry point)."""

    module: str
    origin: str


@dataclass(frozen=True)
class Problem:
    """What is wrong with one module or workflow: ``code`` (``E001``…), ``module``, ``workflow``
    (``""`` when the problem is the module's), ``message`` and ``hint`` (what to fix)."""

    code: str
    module: str
    workflow: str
    message: str
    hint: str


@dataclass
class Registry:
    """The loaded registry: ``specs`` and ``modules`` by workflow name, the ``sources`` read, the
    ``problems`` found while loading."""

    specs: dict[str, WorkflowSpec] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    sources: list[Source] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _django_settings() -> Any:
    """Django's settings when a settings module is configured, else None (a script)."""
    try:
        from django.conf import settings  # the package imports no Django itself (authors' scripts)
    except ImportError:
        return None
    if settings.configured or os.environ.get("DJANGO_SETTINGS_MODULE"):
        return settings
    return None


def configured_modules() -> Any:
    """The modules the settings name (``REVIEWCONSOLE["WORKFLOWS"]``), as configured (a list of
    str when well-formed: :func:`load` reports anything else); without Django, from the environment."""
    settings = _django_settings()
    if settings is None:
        from reviewconsole.settings.env import DEMO_WORKFLOWS, workflow_modules  # imports Django: see above

        return workflow_modules([DEMO_WORKFLOWS])
    return getattr(settings, "REVIEWCONSOLE", {}).get("WORKFLOWS", [])


BUILTIN = "reviewconsole.workflows.review"
"""The console's own workflows (the review request), registered first, whatever the settings say."""


def _sources(problems: list[Problem]) -> list[Source]:
    configured = configured_modules()
    sources: list[Source] = []
    if isinstance(configured, list | tuple) and all(isinstance(m, str) for m in configured):
        sources = [Source(m, SETTING) for m in configured]
    else:
        problems.append(
            Problem(
                "E010",
                str(configured)[:200],
                "",
                f"{SETTING} must be a list of dotted module paths, not {type(configured).__name__}.",
                'Write e.g. "WORKFLOWS": ["reviewconsole.demo", "acme.workflows"], or set '
                "REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,acme.workflows.",
            )
        )
    eps = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.value, e.name))
    for ep in eps:
        dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
        origin = f"entry point {ep.name!r} of {dist}"
        if ep.attr:
            problems.append(
                Problem(
                    "E009",
                    ep.value,
                    "",
                    f"The {origin} names {ep.value!r}, an attribute: it must name a module.",
                    f"Name the module that holds WORKFLOWS in the group {ENTRY_POINT_GROUP!r}, e.g. "
                    f"{ep.name} = {ep.module!r}.",
                )
            )
            continue
        sources.append(Source(ep.module, origin))
    return sources


def _spec_problem(
    spec: WorkflowSpec, module: str, specs: dict[str, WorkflowSpec], modules: dict[str, str]
) -> Problem | None:
    for what, value in (("name", spec.name), ("queue", spec.queue)):
        if not isinstance(value, str) or not NAME_RE.match(value) or len(value) > MAX_NAME:
            return Problem(
                "E005",
                module,
                str(spec.name),
                f"Workflow {spec.name!r} in {module!r}: its {what} {value!r} is not URL-safe.",
                f"Use a {what} of 1 to {MAX_NAME} letters, digits, hyphens or underscores, e.g. 'purchase-order'.",
            )
    lifecycle = _lifecycle_problem(spec, module)
    if lifecycle is not None:
        return lifecycle
    if spec.name in specs:
        return Problem(
            "E004",
            module,
            spec.name,
            f"Workflow {spec.name!r} is registered twice: by {modules[spec.name]!r} and by {module!r}.",
            "Rename one of them: names are unique across every registered module (or register the module once).",
        )
    return None


def _lifecycle_problem(spec: WorkflowSpec, module: str) -> Problem | None:
    """E012: an ``on_arrival`` outside :data:`ARRIVAL_POLICIES`, or ``before_decision`` not a
    tuple (or list) of callables."""
    if spec.on_arrival not in ARRIVAL_POLICIES:
        return Problem(
            "E012",
            module,
            str(spec.name),
            f"Workflow {spec.name!r} in {module!r}: on_arrival={spec.on_arrival!r} is not a policy.",
            f"Use one of {', '.join(ARRIVAL_POLICIES)}.",
        )
    checks = spec.before_decision
    if not isinstance(checks, tuple | list) or not all(callable(c) for c in checks):
        return Problem(
            "E012",
            module,
            str(spec.name),
            f"Workflow {spec.name!r} in {module!r}: before_decision must be a tuple of callables.",
            "Write before_decision=(check, ...), each check (DecisionAttempt) -> str | None, "
            "e.g. reason_required_above('amount', 500).",
        )
    return None


def _load_module(source: Source, registry: Registry) -> None:
    try:
        module = importlib.import_module(source.module)
    except Exception as exc:  # the author's code: whatever it raises is reported, with its message
        registry.problems.append(
            Problem(
                "E001",
                source.module,
                "",
                f"Workflow module {source.module!r} ({source.origin}) does not import: {type(exc).__name__}: {exc}",
                f"Fix the module, install what it needs, or remove it from {SETTING} / REVIEWCONSOLE_WORKFLOWS "
                "(or uninstall the distribution whose entry point names it).",
            )
        )
        return
    listed = getattr(module, "WORKFLOWS", None)
    if listed is None:
        registry.problems.append(
            Problem(
                "E002",
                source.module,
                "",
                f"Workflow module {source.module!r} has no module-level WORKFLOWS.",
                "Add WORKFLOWS = [WorkflowSpec(name=..., title=..., queue=..., build=..., input_schema=...)] to it.",
            )
        )
        return
    if not isinstance(listed, list | tuple):
        registry.problems.append(
            Problem(
                "E003",
                source.module,
                "",
                f"WORKFLOWS in {source.module!r} is a {type(listed).__name__}, not a list of WorkflowSpec.",
                "Make WORKFLOWS a list: WORKFLOWS = [WorkflowSpec(...), ...].",
            )
        )
        return
    for index, spec in enumerate(listed):
        if not isinstance(spec, WorkflowSpec):
            registry.problems.append(
                Problem(
                    "E003",
                    source.module,
                    "",
                    f"WORKFLOWS[{index}] in {source.module!r} is a {type(spec).__name__}, not a WorkflowSpec.",
                    "List reviewconsole.workflows.WorkflowSpec(...) objects only.",
                )
            )
            continue
        problem = _spec_problem(spec, source.module, registry.specs, registry.modules)
        if problem is not None:
            registry.problems.append(problem)
            continue
        registry.specs[spec.name] = spec
        registry.modules[spec.name] = source.module


def load(*, log: bool = True) -> Registry:
    """Read the sources and import their modules; the valid specs are kept, the rest reported
    (and logged as errors when ``log``: a process that serves despite them says why a workflow
    is missing)."""
    registry = Registry()
    _load_module(Source(BUILTIN, "the console itself"), registry)
    seen: set[str] = {BUILTIN}
    for source in _sources(registry.problems):
        if source.module in seen:
            continue
        seen.add(source.module)
        registry.sources.append(source)
        _load_module(source, registry)
    for problem in registry.problems if log else ():
        logger.error("%s %s", problem.message, problem.hint)
    return registry


def _built(spec: WorkflowSpec, module: str, which: str, build: Any) -> Problem | None:
    def problem(code: str, message: str, hint: str) -> Problem:
        return Problem(code, module, spec.name, f"Workflow {spec.name!r} in {module!r}: {message}", hint)

    try:
        root = build(None)
    except GraphError as exc:
        return problem("E007", f"the graph of {which} does not validate: {exc}", "Fix the edges or nodes it names.")
    except Exception as exc:  # the author's builder: whatever it raises is reported
        return problem(
            "E006",
            f"{which} raised {type(exc).__name__}: {exc}",
            "Fix the builder: it is called with model=None when the console checks the registry.",
        )
    if not isinstance(root, BaseNode):
        return problem(
            "E006",
            f"{which} returned a {type(root).__name__}, not an engine node.",
            "Return the root node (a Workflow, an LlmAgent, a HandoffGroup…) from the builder.",
        )
    return None


def _policy_problems(spec: WorkflowSpec, module: str) -> list[Problem]:
    """E011: an approval policy of ``spec`` that is not an ``ApprovalPolicy``, repeats a name, names
    a tool the workflow does not have, or whose condition or decision is not usable, e.g. reads an
    argument the tool does not declare (``policy_scope.spec_rule_error`` names the rule)."""
    problems: list[Problem] = []
    seen: set[str] = set()
    hint = (
        "Fix the rule in WorkflowSpec.policies; conditions are CEL over args (the tool's parameters) and "
        "state (the state_schema's keys), e.g. args.amount > 100."
    )
    for index, policy in enumerate(spec.policies):
        if not isinstance(policy, ApprovalPolicy):
            message = f"policies[{index}] is a {type(policy).__name__}, not an ApprovalPolicy."
        elif policy.name in seen:
            message = f"approval policy {policy.name!r} is declared twice."
        else:
            seen.add(policy.name)
            error = spec_rule_error(
                spec,
                name=policy.name,
                tool=policy.tool,
                when=policy.when,
                decide=policy.decide,
                four_eyes_over=policy.four_eyes_over,
            )
            if error is None:
                continue
            message = error
        problems.append(Problem("E011", module, spec.name, f"Workflow {spec.name!r} in {module!r}: {message}", hint))
    return problems


def build_problems(registry: Registry) -> list[Problem]:
    """Each spec's builders (``build`` and every ``previous`` one) run with ``model=None``: those
    that raise (E006), return no node (E006) or give a graph that does not validate (E007, the
    engine's ``GraphError`` message), specs without an ``input_schema`` (E008), and approval
    policies that are not usable (E011: the rule's name and what is wrong)."""
    problems: list[Problem] = []
    for name, spec in sorted(registry.specs.items()):
        module = registry.modules[name]
        if spec.input_schema is None:
            problems.append(
                Problem(
                    "E008",
                    module,
                    name,
                    f"Workflow {name!r} in {module!r} has no input_schema.",
                    "Set input_schema= to a pydantic model (or a JSON Schema dict) of its starting input: "
                    "webhooks, the API and the start form validate against it.",
                )
            )
        problems.extend(_policy_problems(spec, module))
        builders = [("build()", spec.build)] + [(f"previous[{i}]()", b) for i, b in enumerate(spec.previous)]
        problems.extend(p for which, b in builders if (p := _built(spec, module, which, b)) is not None)
    return problems


_lock = threading.Lock()
_current: Registry | None = None


def current() -> Registry:
    """The loaded registry (loaded on first use, then kept until :func:`forget`)."""
    global _current
    loaded = _current
    if loaded is None:
        with _lock:
            if _current is None:
                _current = load()
            loaded = _current
    return loaded


def forget() -> None:
    """Drop the loaded registry (and importlib's path caches, so new distributions are seen)."""
    global _current
    with _lock:
        _current = None
    importlib.invalidate_caches()
