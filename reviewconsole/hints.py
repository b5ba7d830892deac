"""Commands printed for people to copy: spelled with the interpreter that runs this process.

``./run`` starts the console with ``.venv/bin/python``; the system ``python`` has no Django, so a
printed ``python manage.py …`` would fail. :func:`venv_python` is this interpreter as it is typed
from the project directory (``.venv/bin/python``), or its full path from anywhere else.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

__all__ = ["DEFAULT_CONSOLE_URL", "send_webhook_command", "venv_python"]

DEFAULT_CONSOLE_URL = "http://127.0.0.1:8000"
"""Where ``send_webhook`` sends unless given ``--url``."""

EXAMPLE_COMPLAINT = '{"complaint": "My phone battery drains too fast"}'


def venv_python() -> str:
    """This interpreter, relative to the working directory when it lies below it."""
    executable = Path(sys.executable)
    try:
        return str(executable.relative_to(Path.cwd()))
    except ValueError:
        return str(executable)


def send_webhook_command(url: str = DEFAULT_CONSOLE_URL) -> str:
    """The command that sends the demo's email review to the console at ``url`` (``--url`` only
    when it is not the default), with ``REVIEWCONSOLE_VAR_DIR=…`` before it when this process has
    one: ``send_webhook`` reads the console's database, and without it would look in ``var/``."""
    url = url.rstrip("/")
    flag = "" if url == DEFAULT_CONSOLE_URL else f" --url {shlex.quote(url)}"
    data = shlex.quote(EXAMPLE_COMPLAINT)
    var = os.environ.get("REVIEWCONSOLE_VAR_DIR")
    prefix = f"REVIEWCONSOLE_VAR_DIR={shlex.quote(var)} " if var else ""
    return f"{prefix}{shlex.quote(venv_python())} manage.py send_webhook email-review{flag} --data {data}"
