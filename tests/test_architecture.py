"""Data flows one way between the project's apps (docs/architecture.md, "Data flows one way").

Every import of every module under ``reviewconsole/`` counts, also one placed inside a function:
the apps form the layers of :data:`LAYERS`, and an app imports only from layers above its own.
"""

from __future__ import annotations

import ast
import graphlib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "reviewconsole"

LAYERS = [
    "settings",
    "preferences",
    "workflows",
    "audit",
    "workflow_sessions",
    "policies",
    "demo",
    "inbox",
    "outbound",
    "hooks",
    "api",
    "agui",
    "console",
    "testing",
]
"""Upstream first: the settings, people's preferences (time zone, theme: every page reads them),
the registry, the audit log, sessions (the engine's store and the session
service), approval policies (rules, four eyes, standing approvals: data the inbox reads), the demo
workflows and the fault tests' probes (one consumes the sessions' outbox), then
the consumers of the outbox (inbox, outbound), the outside doors, and the console that serves
them all."""

DOWNSTREAM_OF_SESSIONS = {"policies", "inbox", "outbound", "hooks", "api", "agui", "console", "testing"}


def _apps() -> set[str]:
    return {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}


def _imported(module: Path, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        package = ["reviewconsole", *module.relative_to(ROOT).parts[:-1]]
        base = package[: len(package) - node.level + 1]
        name = ".".join([*base, node.module] if node.module else base)
    else:
        name = node.module or ""
    return [name, *(f"{name}.{alias.name}" for alias in node.names)]


def app_imports() -> dict[str, dict[str, list[str]]]:
    """``{app: {imported app: ["file:line", …]}}`` over every module of every app (migrations too)."""
    apps = _apps()
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module in sorted(ROOT.rglob("*.py")):
        parts = module.relative_to(ROOT).parts
        if len(parts) < 2 or parts[0] not in apps:
            continue
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            for name in _imported(module, node):
                words = name.split(".")
                if len(words) > 1 and words[0] == "reviewconsole" and words[1] in apps and words[1] != parts[0]:
                    where = f"{module.relative_to(ROOT.parent)}:{node.lineno}"  # type: ignore[attr-defined]
                    if where not in found[parts[0]][words[1]]:
                        found[parts[0]][words[1]].append(where)
    return found


def test_every_app_has_a_layer():
    assert _apps() <= set(LAYERS), f"add {sorted(_apps() - set(LAYERS))} to LAYERS (and to docs/architecture.md)"


def test_sessions_import_nothing_downstream_of_them():
    wrong = {app: where for app, where in app_imports()["workflow_sessions"].items() if app in DOWNSTREAM_OF_SESSIONS}
    assert not wrong, f"workflow_sessions imports apps downstream of it: {wrong}"


def test_no_import_circle_between_apps():
    graph = {app: set(imported) for app, imported in app_imports().items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle between apps: {exc.args[1]}")


def test_apps_import_only_from_layers_above_them():
    rank = {app: n for n, app in enumerate(LAYERS)}
    wrong = {
        f"{app} -> {imported}": where[:3]
        for app, imports in app_imports().items()
        for imported, where in imports.items()
        if rank.get(imported, -1) >= rank.get(app, len(LAYERS))
    }
    assert not wrong, f"imports against the layers {LAYERS}: {wrong}"
