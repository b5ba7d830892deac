"""Conditions of approval policies: CEL expressions over a tool call's arguments and its session's state.

A condition is data, not code: a `Common Expression Language <https://cel.dev>`_ expression
(``common-expression-language``, Rust's ``cel`` crate behind Python bindings) that sees two
variables, ``args`` (the call's arguments, a JSON object) and ``state`` (the session's state, a
JSON object), e.g. ``args.amount > 100`` or ``args.amount > 1000 && state.tier != "vip"``.
CEL has no loops, no I/O and no side effects, so an admin's rule cannot do anything but answer.

:func:`condition_error` validates one when it is saved (the admin's form, the registry's
system checks): it must parse, name only ``args``, ``state`` and the variables of list macros
inside their parentheses (``args.items.exists(x, x.price > 100)``), call at most
:data:`MAX_MACROS` list macros and only CEL's standard functions, and, given what ``args`` and
``state`` hold (``policy_scope.roots_for``: the tool's parameters, the workflow's
``state_schema``), read only fields they declare (``args.amont`` is refused, naming the
parameters). The names are read from the condition's syntax tree (:mod:`.condition_names`).
:func:`condition_holds` evaluates one. Both take the text; compiled programs are cached per text.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import cel

from .condition_names import Reading, Root, read

__all__ = ["VARIABLES", "ConditionError", "condition_error", "condition_holds"]

logger = logging.getLogger("reviewconsole.policies")

VARIABLES = ("args", "state")
"""What a condition may name: the call's arguments and the session's state."""

MAX_LENGTH = 2000
"""Longest condition (characters)."""

_STANDARD = frozenset(
    {
        "size", "has", "int", "uint", "double", "string", "bool", "bytes", "type", "dyn", "matches",
        "contains", "startsWith", "endsWith", "exists", "all", "exists_one", "map", "filter", "timestamp",
        "duration", "lowerAscii", "upperAscii", "trim", "split", "join", "replace", "indexOf",
        "lastIndexOf", "substring", "min", "max", "abs", "ceil", "floor", "round",
    }
)  # fmt: skip
"""CEL's functions and macros a condition may call (operators are named ``_…_``, ``!_``, ``@…``)."""


MAX_MACROS = 2
"""Most list macros in one condition: nested ``[1..10].map(...)`` takes seconds at depth 6 and
runs in the relay's transaction (found by this session's attack)."""

UNCHECKED: Mapping[str, Root] = {name: Root() for name in VARIABLES}
"""The roots when nothing is known of what they hold: only the names are checked."""


class ConditionError(ValueError):
    """A condition that cannot be used; the message says what is wrong (never raised by
    :func:`condition_holds`, which logs and answers ``default`` instead)."""


@functools.lru_cache(maxsize=512)
def _program(text: str) -> Any:
    """The compiled program of ``text``.

    Raises:
        ConditionError: it does not parse, names something it may not, or calls too many list macros.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConditionError("The condition is empty: write e.g. args.amount > 100 (or true).")
    if len(text) > MAX_LENGTH:
        raise ConditionError(f"The condition is longer than {MAX_LENGTH} characters.")
    try:
        program = cel.compile(text)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "it does not parse"
        raise ConditionError(f"The condition {text!r} is not valid CEL: {first}") from None
    _check(text, _reading(text, UNCHECKED))
    calls = sorted(f for f in program.functions() if f[:1].isalpha() and f not in _STANDARD)
    if calls:
        raise ConditionError(f"The condition {text!r} calls {', '.join(calls)}, which CEL does not define.")
    return program


def _reading(text: str, roots: Mapping[str, Root]) -> Reading:
    reading = read(text, roots)
    if reading.unreadable:
        raise ConditionError(f"The condition {text!r} cannot be checked: {reading.unreadable}")
    return reading


def _check(text: str, reading: Reading) -> None:
    """Raise for free names and too many list macros (see :mod:`.condition_names`)."""
    if reading.macros > MAX_MACROS:
        raise ConditionError(
            f"The condition {text!r} has {reading.macros} list macros (map, filter, all, exists, exists_one): "
            f"at most {MAX_MACROS}, so that it cannot run for long in the relay."
        )
    if reading.free:
        raise ConditionError(
            f"The condition {text!r} names {', '.join(sorted(reading.free))}: it may use only args (the call's "
            "arguments), state (the session's state) and the variables of list macros inside their "
            "parentheses, e.g. args.amount > 100 or args.items.exists(x, x.price > 100)."
        )


def condition_error(text: str, roots: Mapping[str, Root] | None = None) -> str | None:
    """What is wrong with the condition ``text``, or None when it is usable.

    ``roots``: what ``args`` and ``state`` hold (:class:`~.condition_names.Root`, their JSON
    Schemas); a field they do not declare is an error naming it and what is declared. Without
    ``roots`` only the names are checked."""
    try:
        _program(text)
        if roots is not None:
            unknown = _reading(text, roots).unknown
            if unknown:
                return (
                    f"The condition {text!r} reads what is not declared: {'; '.join(unknown)}. "
                    "Check the spelling: an undeclared name is never there, so the rule would never apply."
                )
    except ConditionError as exc:
        return str(exc)
    return None


def condition_holds(text: str, *, args: Any, state: Any, default: bool) -> bool:
    """Whether ``text`` is true for a call with ``args`` in a session with ``state``.

    A condition that cannot be evaluated for this call (a missing argument, a type CEL will not
    compare, a result that is not a boolean) answers ``default``: callers pass the answer that
    leaves the decision to people (False for "decide automatically", True for "four eyes").
    """
    try:
        result = _program(text).execute({"args": args if isinstance(args, dict) else {}, "state": state or {}})
    except Exception as exc:  # the author's rule on this call (ZeroDivisionError, OverflowError, …): not evaluated
        logger.warning("Condition %r not evaluated (%s); taken as %s", text, type(exc).__name__, default)
        return default
    if not isinstance(result, bool):
        logger.warning("Condition %r gave %s, not a boolean; taken as %s", text, type(result).__name__, default)
        return default
    return result


def rule_error(
    *,
    name: str,
    tool: str,
    when: str,
    decide: str | None,
    four_eyes_over: str | None,
    roots: Mapping[str, Root] | None = None,
) -> str | None:
    """What is wrong with an approval rule (``workflows.ApprovalPolicy`` or an admin's row), naming
    the rule and the field, or None when it is usable. ``roots``: what its conditions may read
    (:func:`condition_error`)."""
    if not isinstance(name, str) or not name.strip():
        return "An approval policy has no name: give each rule a name, e.g. 'small-refunds'."
    if not isinstance(tool, str) or not tool.strip():
        return f"Approval policy {name!r}: tool is empty; name the tool (or '*' for every tool)."
    if decide not in (None, "", "approve", "reject"):
        return f"Approval policy {name!r}: decide must be 'approve', 'reject' or None, not {decide!r}."
    for field, text in (("when", when), ("four_eyes_over", four_eyes_over)):
        if field == "four_eyes_over" and not text:
            continue
        problem = condition_error(text, roots) if isinstance(text, str) else "The condition must be text."
        if problem is not None:
            return f"Approval policy {name!r}, {field}: {problem}"
    if decide and four_eyes_over:
        return f"Approval policy {name!r}: a rule that decides by itself cannot also ask for four eyes."
    return None
