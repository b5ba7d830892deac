"""System checks of the workflow registry (``manage.py check``; also run by ``serve`` and ``worker``).

One :class:`django.core.checks.Error` per :class:`~.registry.Problem`, its id
``reviewconsole.workflows.E0nn``: E001 a module does not import (with the exception's message),
E002 no ``WORKFLOWS``, E003 ``WORKFLOWS`` malformed, E004 duplicate names, E005 a name or queue
that is not URL-safe, E006 a ``build`` that raises (or returns no node), E007 a graph that does
not validate (the engine's message), E008 no ``input_schema``, E009 an entry point that names an
attribute, E010 ``REVIEWCONSOLE["WORKFLOWS"]`` not a list, E011 an approval policy that is not usable (its
name, the field and what is wrong), E012 an ``on_arrival`` that is not a policy or a
``before_decision`` that is not a tuple of callables. Each message names the module and the
workflow; the hint says what to fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks

from . import registry

__all__ = ["check_registry"]


@checks.register("reviewconsole")
def check_registry(app_configs: Sequence[AppConfig] | None = None, **_: Any) -> list[checks.CheckMessage]:
    """Load the registry afresh and report every problem of its modules and specs."""
    if app_configs is not None and not any(c.name == "reviewconsole.workflows" for c in app_configs):
        return []
    loaded = registry.load(log=False)  # afresh: the modules and entry points as they are now
    problems = loaded.problems + registry.build_problems(loaded)
    return [
        checks.Error(p.message, hint=p.hint, obj=p.module, id=f"reviewconsole.workflows.{p.code}") for p in problems
    ]
