"""The engine imports nothing from Django (or from the console): proved in a clean interpreter."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN = ("django", "channels", "daphne", "asgiref", "reviewconsole")

PROBE = f"""
import sys
import engine, engine.openai_model
from engine import Runner, Workflow, START, InMemoryStore
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r})
print(",".join(loaded))
"""


def test_importing_the_engine_loads_no_django_module():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ENGINE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"engine loaded {done.stdout.strip()}"


def test_no_engine_module_names_a_forbidden_package():
    offenders = []
    for path in sorted(ENGINE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for item in ast.walk(tree):
            if isinstance(item, ast.Import):
                names = [alias.name for alias in item.names]
            elif isinstance(item, ast.ImportFrom) and item.level == 0 and item.module:
                names = [item.module]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []
