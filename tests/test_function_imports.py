"""Imports inside functions only with a reason (issue 13): Django's app loading, a real cycle.

Every ``import`` inside a function body under ``reviewconsole/`` and ``engine/`` (the engine is
not Django: the same rule) must say why it is not at the top of its module, in a comment on its
own line or on the line above it (or above the block of imports it opens), as the inbox does::

    def ready(self) -> None:
        # In ready(): these modules import models, which Django loads only once the app registry is ready.
        from .models import Queue
        from .items.expiry import inbox_sweep

    from .assignment import triage_queue  # assignment imports this module (due_fields)

A lint pragma alone (``# noqa: F401``, ``# type: ignore``) is not a reason.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRAGMA = re.compile(r"noqa(:\s*[A-Z]+[0-9]+(,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore(\[[^\]]*\])?")


def _reasons(source: str) -> dict[int, str]:
    """``{line: comment text}`` of the comments that say something besides lint pragmas."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = PRAGMA.sub("", token.string.lstrip("#")).strip(" ()")
            if len(re.findall(r"[A-Za-z]{2,}", text)) >= 2:
                found[token.start[0]] = text
    return found


def unexplained_imports(path: str, source: str) -> list[str]:
    """``["path:line: import …"]`` of the function-level imports of ``source`` with no reason."""
    tree = ast.parse(source, path)
    imports = [
        node
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    covered = {line for node in imports for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    lines = source.splitlines()
    reasons = _reasons(source)
    found = []
    for node in sorted(set(imports), key=lambda n: n.lineno):
        own = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        above = node.lineno - 1
        while above in covered or (above > 0 and not lines[above - 1].strip()):  # the block it sits in
            above -= 1
        block_comment = above in reasons and lines[above - 1].lstrip().startswith("#")
        if not block_comment and not any(line in reasons for line in own):
            found.append(f"{path}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_every_import_inside_a_function_says_why():
    found = []
    for package in ("reviewconsole", "engine"):
        for module in sorted((ROOT / package).rglob("*.py")):
            found += unexplained_imports(module.relative_to(ROOT).as_posix(), module.read_text(encoding="utf-8"))
    assert found == [], (
        "move these imports to the top of their module, or say why they cannot be there "
        "(app loading, a cycle) in a comment:\n" + "\n".join(found)
    )


def test_the_scan_tells_a_reason_from_none():
    source = """
import json


def ready():
    # In ready(): these import models, which Django loads only now.
    from .models import Queue
    from .expiry import sweep

    from ..outbox import register
    return Queue, sweep, register


def cycle():
    from .assignment import triage  # assignment imports this module
    return triage


def lazy():
    value = 1
    from .tasks import deliver
    from . import checks  # noqa: F401
    from .other import (  # type: ignore[attr-defined]
        thing,
    )
    return value, deliver, checks, thing


class Config:
    def method(self):
        async def inner():
            import os
        return inner
"""
    assert unexplained_imports("x.py", source) == [
        "x.py:21: from .tasks import deliver",
        "x.py:22: from . import checks  # noqa: F401",
        "x.py:23: from .other import (  # type: ignore[attr-defined]",
        "x.py:32: import os",
    ]
