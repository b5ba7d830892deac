"""Only the session service calls the engine's ``Runner`` (docs/architecture.md, "Data flows one way";
issue 13, design point 1).

An AST walk over every module under ``reviewconsole/`` outside ``workflow_sessions/`` (imports
inside functions count too) fails on:

- an import of ``workflow_sessions.runners`` (``runner_for``, ``runner_for_session``, the module);
- an import of ``engine.Runner``;
- a call of a ``Runner`` method (``start``, ``submit``, ``run_pending``, ``restore_checkpoint``,
  ``retry``, ``cancel``, ``create_session``) on something named like a runner
  (``runner.start(…)``, ``runner_for(…).submit(…)``), any ``.run_pending(…)`` or
  ``.restore_checkpoint(…)``, and a read of a runner's ``store``.

``testing/`` is the workflow authors' kit: it builds its own ``Runner`` on an in-memory store, never
the console's, and is exempt.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "reviewconsole"

EXEMPT_DIRS = {"workflow_sessions", "testing"}

RUNNERS = "reviewconsole.workflow_sessions.runners"

RUNNER_METHODS = {"start", "submit", "run_pending", "restore_checkpoint", "retry", "cancel", "create_session"}
UNIQUE_METHODS = {"run_pending", "restore_checkpoint"}


def _absolute(path: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = ["reviewconsole", *Path(path).parts[:-1]]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _runnerish(node: ast.expr) -> bool:
    return "runner" in ast.unparse(node).lower()


def violations(path: str, source: str) -> list[str]:
    """What in ``source`` (the module at ``path``, relative to ``reviewconsole/``) goes to the
    engine's runner around the session service: ``["path:line what", …]``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where} imports {a.name}" for a in node.names if a.name in (RUNNERS, "engine._runner")]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            for alias in node.names:
                name = f"{module}.{alias.name}"
                if module == RUNNERS:
                    found.append(f"{where} imports {alias.name} from runners")
                elif name == RUNNERS or (module in ("engine", "engine._runner") and alias.name == "Runner"):
                    found.append(f"{where} imports {name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            if method in UNIQUE_METHODS or (method in RUNNER_METHODS and _runnerish(receiver)):
                found.append(f"{where} calls {ast.unparse(node.func)}()")
        elif isinstance(node, ast.Attribute) and node.attr == "store" and _runnerish(node.value):
            found.append(f"{where} reads {ast.unparse(node)}")
    return found


def test_no_module_outside_the_sessions_app_uses_the_runner():
    found = []
    for module in sorted(ROOT.rglob("*.py")):
        path = module.relative_to(ROOT)
        if path.parts[0] in EXEMPT_DIRS:
            continue
        found += violations(path.as_posix(), module.read_text(encoding="utf-8"))
    assert found == [], "go through workflow_sessions.services instead:\n" + "\n".join(found)


def test_the_walk_finds_each_way_around_the_service():
    source = """
from ..workflow_sessions.runners import runner_for
from reviewconsole.workflow_sessions import runners
from engine import Runner

async def door(session_id, spec):
    runner = runner_for(spec.name)
    await runner.start(session_id, "hi")
    await runner_for(spec.name).submit(session_id, {})
    await something.run_pending(session_id)
    record = await runner.store.get_session(session_id)
    thread.start()
    publisher.submit(lambda: None)
"""
    found = violations("agui/door.py", source)
    assert len(found) == 7, found
    assert {line.split(" ", 1)[1] for line in found} == {
        "imports runner_for from runners",
        "imports reviewconsole.workflow_sessions.runners",
        "imports engine.Runner",
        "calls runner.start()",
        "calls runner_for(spec.name).submit()",
        "calls something.run_pending()",
        "reads runner.store",
    }
    assert violations("inbox/pages/view_helpers.py", "from ...workflow_sessions.runners import configured_model") == [
        "inbox/pages/view_helpers.py:1 imports configured_model from runners"
    ]
