"""``serve --reload``: run the console in a child process and restart it when workflow code changes.

What is watched: the folder of every registered workflow's top-level package (the module of each
spec's ``build``, and the modules named in ``settings.REVIEWCONSOLE["WORKFLOWS"]``), or the file
of a top-level module; only Python files count (``watchfiles.PythonFilter``). On a change the
child gets SIGINT (Daphne and the worker stop as on Ctrl-C; after 5 s it is killed) and a new one
starts and checks the registry again. The child gets SIGTERM when the parent dies, even by
``kill -9`` (Linux ``PR_SET_PDEATHSIG``), and the parent exits with an error when its first child ends by
itself (its port taken, a broken registry) instead of waiting for a change. Paused sessions are
rows in the database: the new process serves them, and its recovery loop picks up a run the
restart interrupted (from its last checkpoint, as after a crash).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import watchfiles
from django.conf import settings

from ..workflows import all_specs

__all__ = ["PARENT_ENV", "ChildFailedError", "die_with_parent", "serve_with_reload", "watched_paths"]


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


PARENT_ENV = "REVIEWCONSOLE_RELOAD_PARENT"
"""The environment variable that gives the child the reloading parent's pid (see :func:`die_with_parent`)."""

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_STOP_GRACE = 5.0  # seconds a child has to stop after SIGINT before it is killed
_POLL_MS = 500  # how often the child's state is looked at while no file changes


class ChildFailedError(RuntimeError):
    """The console's first child process ended by itself (e.g. its port is taken); ``exit_code``."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(
            f"The console stopped by itself (exit code {exit_code}) before any change to the workflow code; "
            "see its output above (e.g. 'Address already in use': another console serves that port)."
        )
        self.exit_code = exit_code


def die_with_parent() -> None:
    """In the child of ``serve --reload``: ask Linux for SIGTERM when the parent dies (``prctl(2)``,
    ``PR_SET_PDEATHSIG``), so a parent killed with ``kill -9`` leaves no console serving old code.

    Does nothing unless :data:`PARENT_ENV` is set. Exits (status 1) at once when the parent is
    already gone (its pid is no longer ours' parent). Elsewhere than Linux, only that check runs.
    """
    parent = os.environ.pop(PARENT_ENV, "")
    if not parent:
        return
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(parent):
        raise SystemExit(1)


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, env={**os.environ, PARENT_ENV: str(os.getpid())})  # noqa: S603 (our own argv)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGINT (Daphne stops as on Ctrl-C), then SIGKILL after :data:`_STOP_GRACE` s; reaped."""
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(_STOP_GRACE)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def serve_with_reload(serve_args: list[str], stdout: TextIO | Any) -> None:
    """Run ``manage.py serve --no-migrate <serve_args>`` in a child process until Ctrl-C,
    restarting it whenever a watched Python file changes (``watchfiles.watch``).

    The child dies with this process (:func:`die_with_parent`). A child that ends by itself after
    a change (e.g. the changed code does not import) is reported and started again on the next
    change.

    Raises:
        ChildFailedError: the first child ended by itself, before any change (e.g. it could not
            bind its port): nothing would be served.
    """

    paths = watched_paths()
    command = [sys.executable, "-m", "django", "serve", "--no-migrate", *serve_args]
    stdout.write("Reloading on changes to the workflow code in: " + ", ".join(str(p) for p in paths))
    stdout.flush()
    child: subprocess.Popen[bytes] | None = _start(command)
    changed = False
    try:
        for changes in watchfiles.watch(
            *paths, watch_filter=watchfiles.PythonFilter(), rust_timeout=_POLL_MS, yield_on_timeout=True
        ):
            if changes:
                files = sorted({Path(path).name for _, path in changes})
                stdout.write(f"Changed: {', '.join(files)}; restarting the console.")
                stdout.flush()
                if child is not None:
                    _stop(child)
                child, changed = _start(command), True
            elif child is not None and child.poll() is not None:
                if not changed:
                    raise ChildFailedError(child.returncode)
                stdout.write(
                    f"The console stopped by itself (exit code {child.returncode}); "
                    "it starts again on the next change to the workflow code."
                )
                stdout.flush()
                child = None
    except KeyboardInterrupt:
        pass
    finally:
        if child is not None:
            _stop(child)
    stdout.write("Stopped.")
