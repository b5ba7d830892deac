"""How a function node's parameters get their values: type hints and where each value comes from.

:func:`bind_signature` reads a function's signature once (at the node's creation) into a
:class:`Binding`; :meth:`engine.FunctionNode.bind` reads the values for one call from it.
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from ._context import Context

__all__ = ["Binding", "Param", "bind_signature", "type_hints"]


@dataclass
class Param:
    """How one parameter of a function node gets its value: from ``source``, coerced by ``adapter``
    (None: no type hint) unless its type is exactly ``plain_type``; ``default`` when missing."""

    name: str
    source: str  # "ctx" | "node_input" | "state" | "input_key"
    adapter: TypeAdapter[Any] | None = None
    default: Any = inspect.Parameter.empty
    plain_type: type | None = None


@dataclass
class Binding:
    """A function's parameters in order (:func:`bind_signature`)."""

    params: list[Param] = field(default_factory=list)


def _is_context_annotation(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Context)


def type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolved type hints; a hint that cannot be resolved is left out.

    ``typing.get_type_hints`` fails as a whole on one unresolvable forward reference; this
    falls back to resolving each hint on its own (module globals, then closure variables).
    """
    with contextlib.suppress(Exception):  # one unresolvable forward reference: resolve the others one by one
        return typing.get_type_hints(func)
    target = inspect.unwrap(func)
    namespace = dict(getattr(target, "__globals__", {}))
    with contextlib.suppress(TypeError, ValueError):
        namespace.update(inspect.getclosurevars(target).nonlocals)
    hints: dict[str, Any] = {}
    for name, annotation in getattr(target, "__annotations__", {}).items():
        try:
            hints[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation  # noqa: S307
        except Exception:  # noqa: S112 (unresolvable: no coercion for this parameter)
            continue
    return hints


def bind_signature(func: Callable[..., Any], parameter_binding: str) -> Binding:
    """Where each parameter of ``func`` comes from: ``ctx``/``tool_context`` or a
    :class:`~engine.Context` hint the context, ``node_input`` the input, every other one the
    session state (``parameter_binding="state"``) or the dict input's key (``"node_input"``)."""
    hints = type_hints(func)
    binding = Binding()
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if param.name in ("ctx", "tool_context") or _is_context_annotation(annotation):
            binding.params.append(Param(param.name, "ctx"))
            continue
        if param.name == "node_input":
            source = "node_input"
        elif parameter_binding == "node_input":
            source = "input_key"
        else:
            source = "state"
        adapter = None
        plain = None
        if annotation is not inspect.Parameter.empty and annotation is not Any:
            adapter = TypeAdapter(annotation)
            if annotation in (str, int, float, bool, dict, list):
                plain = annotation
        binding.params.append(Param(param.name, source, adapter, param.default, plain))
    return binding
