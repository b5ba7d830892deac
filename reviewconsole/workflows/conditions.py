"""Conditions of approval policies: CEL expressions over a tool call's arguments and its session's state.

A condition is data, not code: a `Common Expression Language <https://cel.dev>`_ expression
(``common-expression-language``, Rust's ``cel`` crate behind Python bindings) that sees two
variables, ``args`` (the call's arguments, a JSON object) and ``state`` (the session's state, a
JSON object), e.g. ``args.amount > 100`` or ``args.amount > 1000 && state.tier != "vip"``.
CEL has no loops, no I/O and no side effects, so an admin's rule cannot do anything but answer.

:func:`condition_error` validates one when it is saved (the admin's form, the registry's
system checks): it must parse, name only ``args`` and ``state``, and call only CEL's standard
functions. :func:`condition_holds` evaluates one. Both take the text; compiled programs are
cached per text.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import cel

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
"""CEL's functions and macros a condition may call (operators are named ``_…_`` / ``@…``)."""


MAX_MACROS = 2
"""Most list macros in one condition: nested ``[1..10].map(...)`` takes seconds at depth 6 and
runs in the relay's transaction (found by this session's attack)."""

_MACRO = re.compile(r"\.\s*(?:map|filter|all|exists_one|exists)\s*\(")


class ConditionError(ValueError):
    """A condition that cannot be used; the message says what is wrong (never raised by
    :func:`condition_holds`, which logs and answers ``default`` instead)."""


@functools.lru_cache(maxsize=512)
def _program(text: str) -> Any:
    """The compiled program of ``text``.

    Raises:
        ConditionError: it does not parse, or names something it may not.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConditionError("The condition is empty: write e.g. args.amount > 100 (or true).")
    if len(text) > MAX_LENGTH:
        raise ConditionError(f"The condition is longer than {MAX_LENGTH} characters.")
    loops = len(_MACRO.findall(text))
    if loops > MAX_MACROS:
        raise ConditionError(
            f"The condition {text!r} has {loops} list macros (map, filter, all, exists, exists_one): "
            f"at most {MAX_MACROS}, so that it cannot run for long in the relay."
        )
    try:
        program = cel.compile(text)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "it does not parse"
        raise ConditionError(f"The condition {text!r} is not valid CEL: {first}") from None
    unknown = sorted(set(program.variables()) - set(VARIABLES))
    if unknown:
        raise ConditionError(
            f"The condition {text!r} names {', '.join(unknown)}: it may use only args (the call's "
            "arguments) and state (the session's state), e.g. args.amount > 100."
        )
    calls = sorted(f for f in program.functions() if not f.startswith(("_", "@")) and f not in _STANDARD)
    if calls:
        raise ConditionError(f"The condition {text!r} calls {', '.join(calls)}, which CEL does not define.")
    return program


def condition_error(text: str) -> str | None:
    """What is wrong with the condition ``text``, or None when it is usable."""
    try:
        _program(text)
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


def rule_error(*, name: str, tool: str, when: str, decide: str | None, four_eyes_over: str | None) -> str | None:
    """What is wrong with an approval rule (``workflows.ApprovalPolicy`` or an admin's row), naming
    the rule and the field, or None when it is usable."""
    if not isinstance(name, str) or not name.strip():
        return "An approval policy has no name: give each rule a name, e.g. 'small-refunds'."
    if not isinstance(tool, str) or not tool.strip():
        return f"Approval policy {name!r}: tool is empty; name the tool (or '*' for every tool)."
    if decide not in (None, "", "approve", "reject"):
        return f"Approval policy {name!r}: decide must be 'approve', 'reject' or None, not {decide!r}."
    for field, text in (("when", when), ("four_eyes_over", four_eyes_over)):
        if field == "four_eyes_over" and not text:
            continue
        problem = condition_error(text) if isinstance(text, str) else "The condition must be text."
        if problem is not None:
            return f"Approval policy {name!r}, {field}: {problem}"
    if decide and four_eyes_over:
        return f"Approval policy {name!r}: a rule that decides by itself cannot also ask for four eyes."
    return None
