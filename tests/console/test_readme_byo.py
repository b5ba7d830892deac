"""The README's "Bring your own workflow" commands, followed as written: startworkflow into a
fresh folder, its generated test with ``./test`` (``./run`` installs no pytest; ``./test`` runs it
on a path outside the clone, with that path's own pytest configuration), and ``manage.py check``
with ``REVIEWCONSOLE_WORKFLOWS`` set. ``.venv`` is the running interpreter's venv (``VENV``).
The folder the README names is replaced by a temporary one; ``./run`` (it serves until Ctrl-C) is
only checked to use the same registration (``test_serve_reload.py`` runs ``serve --reload``)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def _section_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Bring your own workflow\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def _run(line: str, folder: str, tmp: Path) -> subprocess.CompletedProcess:
    words = shlex.split(line.replace(folder, str(tmp)))
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}  # manage.py's default
    env["REVIEWCONSOLE_VAR_DIR"] = str(tmp / "var")
    while ASSIGNMENT.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    env["VENV"] = str(Path(sys.executable).parent.parent)  # what ./test and .venv/bin/python name
    if words[0] == ".venv/bin/python":
        words[0] = sys.executable
    return subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_readme_commands_work_on_a_fresh_folder(tmp_path):
    commands = _section_commands()
    [start] = [c for c in commands if " startworkflow " in c]
    folder = shlex.split(start)[shlex.split(start).index("--directory") + 1]
    *steps, serve = commands
    assert serve.endswith("./run --reload")
    registration = serve.removesuffix("./run --reload")
    assert "REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,expense_claim" in registration

    outputs = []
    for line in steps:
        done = _run(line, folder, tmp_path)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    assert (tmp_path / "expense_claim" / "__init__.py").exists()
    assert shlex.split(steps[1])[0] == "./test", "the generated test runs with ./test, which installs pytest"
    assert "3 passed" in outputs[1]
    assert "System check identified no issues" in outputs[2]
    assert steps[2].startswith(registration), "check runs with the registration ./run uses"
    assert "REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,expense_claim ./run" in outputs[0]
    assert f"  ./test {tmp_path}/expense_claim" in outputs[0], "startworkflow prints the README's test command"
