"""``python manage.py startworkflow <name> [--directory DIR]``: a new workflow package and its test.

Writes ``DIR/<package>/`` (see :mod:`reviewconsole.console.scaffold`) and prints how to run its
test and how to register it (``REVIEWCONSOLE_WORKFLOWS``). Refuses (exit 1, nothing written) a
name that is not URL-safe, that names a registered workflow or an importable module, or whose
folder exists.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewconsole.console.scaffold import ScaffoldError, scaffold
from reviewconsole.workflows import UnknownWorkflowError, module_of


class Command(BaseCommand):
    help = "Create a workflow package (a workflow, its WORKFLOWS list and a test) and say how to register it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="The workflow's name, URL-safe (e.g. expense-claim; package expense_claim).")
        parser.add_argument("--directory", default=".", help="Where to create the package (default: here).")

    def handle(self, *args: Any, name: str, directory: str, **options: Any) -> None:
        try:
            registered_by = module_of(name)
        except UnknownWorkflowError:
            pass
        else:
            raise CommandError(
                f"A workflow named {name!r} is registered already (by {registered_by}): "
                "choose another name; nothing was written."
            )
        try:
            made = scaffold(name, Path(directory))
        except ScaffoldError as exc:
            raise CommandError(str(exc)) from None
        shown = _shown(made.directory)
        self.stdout.write(f"Created the workflow {made.name!r} in {shown}/{made.package}/:")
        for relative in made.files:
            self.stdout.write(f"  {relative}")
        self.stdout.write("Run its test (./test installs pytest into the venv first; ./run does not):")
        self.stdout.write(f"  ./test {shlex.quote(f'{shown}/{made.package}')}")
        self.stdout.write("Register it (in the environment; name reviewconsole.demo too to keep the demo workflows):")
        path = "" if made.directory == Path.cwd() else f"PYTHONPATH={shlex.quote(shown)} "
        self.stdout.write(f"  {path}REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,{made.package} ./run")
        self.stdout.write("or in the settings (the package importable, e.g. installed or on PYTHONPATH):")
        self.stdout.write(f'  REVIEWCONSOLE["WORKFLOWS"] = ["reviewconsole.demo", "{made.package}"]')
        self.stdout.write(f"Then: manage.py check; manage.py workflows lists {made.name!r}.")


def _in_cwd(path: Path) -> bool:
    return path.is_relative_to(Path.cwd())


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is inside it, else absolute."""
    return str(path.relative_to(Path.cwd())) if _in_cwd(path) else str(path)
