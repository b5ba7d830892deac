"""The sessions app's store path imports nothing downstream of it (issue 13: the store reports,
it does not call): not at the top of a module, not inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "reviewconsole" / "workflow_sessions"
STORE_PATH = [
    "store.py",
    "store_sql.py",
    "store_rows.py",
    "restore.py",
    "recovery.py",
    "outcome.py",
    "tasks.py",
    "runners.py",
    "outbox.py",
    "domain_events.py",
    "models.py",
]
DOWNSTREAM = {"inbox", "outbound", "hooks", "api", "agui", "console"}


def _imported_apps(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level >= 2:  # from ..inbox import x
                names = [module] if module else [alias.name for alias in node.names]
            elif node.level == 0:
                names = [module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "reviewconsole" and len(parts) > 1:
                parts = parts[1:]
            found.add(parts[0])
    return found & DOWNSTREAM


@pytest.mark.parametrize("module", STORE_PATH)
def test_the_store_path_imports_no_downstream_app(module):
    assert _imported_apps(APP / module) == set()


def test_the_check_sees_a_relative_import_inside_a_function(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..inbox.models import Interrupt\n")
    assert _imported_apps(probe) == {"inbox"}
