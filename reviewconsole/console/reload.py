"""``serve --reload``: run the console in a child process and restart it when workflow code changes.

What is watched: the folder of every registered workflow's top-level package (the module of each
spec's ``build``, and the modules named in ``settings.REVIEWCONSOLE["WORKFLOWS"]``), or the file
of a top-level module; only Python files count (``watchfiles.PythonFilter``). On a change the
child gets SIGINT (Daphne and the worker stop as on Ctrl-C; after 5 s it is killed) and a new one
starts and checks the registry again. Paused sessions are rows in the database: the new process
serves them, and its recovery loop picks up a run the restart interrupted (from its last
checkpoint, as after a crash).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings

from ..workflows import all_specs

__all__ = ["serve_with_reload", "watched_paths"]


def _module_names() -> set[str]:
    names = {getattr(spec.build, "__module__", None) for spec in all_specs()}
    configured = getattr(settings, "REVIEWCONSOLE", {}).get("WORKFLOWS") or ()
    if isinstance(configured, str):
        configured = configured.split(",")
    names.update(str(name).strip() for name in configured)
    return {name for name in names if name}


def _location(module: str) -> list[Path]:
    """The folder(s) of ``module``'s top-level package, or the file of a top-level module."""
    top = module.split(".", 1)[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if found is None:
        return []
    if found.submodule_search_locations:
        return [Path(p) for p in found.submodule_search_locations]
    return [Path(found.origin)] if found.origin and found.has_location else []


def watched_paths(modules: Iterable[str] | None = None) -> list[Path]:
    """Folders and files to watch for the registered workflows (see the module docstring), sorted."""
    paths = {path.resolve() for name in (modules or _module_names()) for path in _location(name)}
    return sorted(path for path in paths if path.exists())


def serve_with_reload(serve_args: list[str], stdout: TextIO | Any) -> None:
    """Run ``manage.py serve --no-migrate <serve_args>`` in a child process until Ctrl-C,
    restarting it whenever a watched Python file changes (``watchfiles.run_process``)."""
    import watchfiles

    paths = watched_paths()
    command = [sys.executable, "-m", "django", "serve", "--no-migrate", *serve_args]
    stdout.write("Reloading on changes to the workflow code in: " + ", ".join(str(p) for p in paths))
    stdout.flush()

    def restarting(changes: set[tuple[Any, str]]) -> None:
        files = sorted({Path(path).name for _, path in changes})
        stdout.write(f"Changed: {', '.join(files)}; restarting the console.")
        stdout.flush()

    watchfiles.run_process(
        *paths,
        target=_shell_words(command),
        target_type="command",
        watch_filter=watchfiles.PythonFilter(),
        callback=restarting,
    )
    stdout.write("Stopped.")


def _shell_words(words: list[str]) -> str:
    import shlex

    return shlex.join(words)
