"""Nodes: the base class, function nodes, the ``@node`` decorator and retry settings.

A function node wraps a plain function, a generator, a coroutine function or an async generator
(ADK 2.x, ``workflow/_function_node.py``). Parameters are bound by name: ``ctx`` (or a parameter
annotated :class:`~engine.Context`) receives the context, ``node_input`` the predecessor's output,
and every other parameter the session-state value of the same name (or, with
``parameter_binding="node_input"``, the key of the same name in a dict input). Type hints coerce
values through pydantic. A missing value with no default raises
:class:`~engine.WorkflowDataError`.

What a node yields or returns: an :class:`~engine.Event` (``message=``, ``state=``, ``route=``,
``output=``), a :class:`~engine.RequestInput` (pause for a person), or any other value, which
becomes the node's output (an event with ``output``). ``None`` is skipped.
"""

from __future__ import annotations

import dataclasses
import inspect
import random
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ._binding import bind_signature
from ._context import Context
from ._errors import ConfigurationError, WorkflowDataError

if typing.TYPE_CHECKING:
    from ._context import Outcome

__all__ = ["BaseNode", "FunctionNode", "RetryConfig", "as_node", "node", "to_jsonable"]


@dataclass
class RetryConfig:
    """Retry a failed node run (ADK ``workflow/_retry_config.py``).

    ``max_attempts`` counts the first run. The delay before attempt *n+1* is
    ``min(initial_delay * backoff_factor**(n-1), max_delay)`` seconds, plus up to ``jitter`` ×
    that delay at random. Only exceptions that are instances of ``exceptions`` are retried.
    """

    max_attempts: int = 3
    initial_delay: float = 1.0
    max_delay: float = 60.0
    backoff_factor: float = 2.0
    jitter: float = 0.0
    exceptions: tuple[type[BaseException], ...] = (Exception,)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        base = min(self.initial_delay * self.backoff_factor ** (attempt - 1), self.max_delay)
        return base + (random.random() * self.jitter * base if self.jitter else 0.0)  # noqa: S311 (not security)


def to_jsonable(value: Any) -> Any:
    """Pydantic models and dataclass instances as plain JSON data; other values unchanged."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


_drive_leaf: Callable[[BaseNode, Context], Awaitable[Outcome]] | None = None
"""``engine._leaf.drive_leaf`` (see :meth:`BaseNode.execute`)."""


class BaseNode:
    """A step of a workflow.

    Options (ADK ``@node``): ``name``; ``description``; ``rerun_on_resume`` (run again after a
    pause, with answers in ``ctx.resume_inputs``; otherwise the answer becomes the node's output);
    ``input_schema`` / ``output_schema`` (pydantic models or types validating ``node_input`` and
    the output); ``retry_config``; ``timeout`` (seconds per attempt, raises
    :class:`~engine.NodeTimeoutError`); ``require_confirmation`` (bool, or a predicate whose
    parameters bind by name to the node's arguments, ``node_input``, ``ctx`` or state keys: a
    person approves before the node runs, through the interrupt
    ``wf_tool_confirmation:<node path>``; a decline skips the node, which outputs
    ``{"error": ...}`` and emits route ``"declined"``); ``auth_config`` (an
    :class:`~engine.AuthConfig`: the node waits on ADK's ``adk_request_credential`` interrupt
    ``wf_auth:<node path>`` until a credential is given, then reads it with
    ``ctx.get_auth_response(auth_config)``, see :mod:`engine._auth`). ``require_confirmation`` and
    ``auth_config`` imply ``rerun_on_resume``.
    """

    wait_for_all = False
    """True for nodes that fire only once every predecessor has finished (joins)."""
    composite = False
    """True for nodes that run children and keep their own checkpoint (:meth:`snapshot`)."""
    authors_own_events = False
    """True when the node's events carry its own name as author (agents, workflows)."""

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        rerun_on_resume: bool = False,
        input_schema: Any = None,
        output_schema: Any = None,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
        require_confirmation: bool | Callable[..., bool] = False,
        auth_config: Any = None,
    ) -> None:
        if not name or not name.replace("_", "a").replace("-", "a").isalnum():
            raise ConfigurationError(f"Node name {name!r} must be letters, digits, '_' or '-'.")
        if timeout is not None and timeout <= 0:
            raise ConfigurationError(f"Node {name}: timeout must be a positive number of seconds.")
        self.name = name
        self.description = description
        self.rerun_on_resume = rerun_on_resume or bool(require_confirmation) or auth_config is not None
        self.auth_config = auth_config
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.retry_config = retry_config
        self.timeout = timeout
        self.require_confirmation = require_confirmation
        self._input_adapter = TypeAdapter(input_schema) if input_schema is not None else None
        self._output_adapter = TypeAdapter(output_schema) if output_schema is not None else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # -- leaf protocol --------------------------------------------------------------------------

    def run(self, ctx: Context) -> AsyncIterator[Any]:
        """Yield events, ``RequestInput`` or output values. Leaf nodes override this."""
        raise NotImplementedError

    async def execute(self, ctx: Context) -> Outcome:
        """Run one activation to an :class:`~engine.Outcome`. Composite nodes override this."""
        global _drive_leaf
        if _drive_leaf is None:  # imported once, not on every run (an import in a function costs calls)
            from ._leaf import drive_leaf  # a cycle: _leaf imports _dynamic, which imports this module

            _drive_leaf = drive_leaf
        return await _drive_leaf(self, ctx)

    def snapshot(self, ctx: Context) -> Any:
        """JSON state a composite node needs to continue after a restart (None for leaves)."""
        return None

    # -- schemas ----------------------------------------------------------------------------

    def validate_input(self, value: Any) -> Any:
        """Coerce ``value`` with ``input_schema`` and return it as JSON data.

        Raises:
            WorkflowDataError: the value does not fit the schema (``details["errors"]``).
        """
        if self._input_adapter is None:
            return value
        try:
            return to_jsonable(self._input_adapter.validate_python(value))
        except ValidationError as exc:
            raise WorkflowDataError(
                f"Node {self.name}: input does not match its input_schema.", errors=_errors(exc)
            ) from exc

    def validate_output(self, value: Any) -> Any:
        """Coerce ``value`` with ``output_schema`` and return it as JSON data."""
        if self._output_adapter is not None:
            try:
                value = self._output_adapter.validate_python(value)
            except ValidationError as exc:
                raise WorkflowDataError(
                    f"Node {self.name}: output does not match its output_schema.", errors=_errors(exc)
                ) from exc
        return to_jsonable(value)


def _errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]


class FunctionNode(BaseNode):
    """A node made from a function (see the module docstring for binding and yields).

    ``parameter_binding`` is ``"state"`` (default: parameters come from session state) or
    ``"node_input"`` (parameters come from the keys of a dict ``node_input``; used for tools).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        parameter_binding: str = "state",
        **options: Any,
    ) -> None:
        if parameter_binding not in ("state", "node_input"):
            raise ConfigurationError("parameter_binding must be 'state' or 'node_input'.")
        super().__init__(
            name=name or func.__name__,
            description=options.pop("description", None) or (inspect.getdoc(func) or ""),
            **options,
        )
        self.func = func
        self.parameter_binding = parameter_binding
        self._binding = bind_signature(func, parameter_binding)
        self._kind = (
            "async_gen"
            if inspect.isasyncgenfunction(func)
            else "gen"
            if inspect.isgeneratorfunction(func)
            else "coro"
            if inspect.iscoroutinefunction(func)
            else "plain"
        )
        self.returns_once = self._kind in ("plain", "coro")
        """True for a plain or coroutine function: it gives at most one item, by returning it."""
        self.is_coroutine = self._kind == "coro"
        """True for a coroutine function: what a call returns is awaited."""

    def bind(self, ctx: Context) -> dict[str, Any]:
        """Arguments for one call, read from ``ctx``."""
        kwargs: dict[str, Any] = {}
        state = ctx.state
        node_input = ctx.node_input
        for p in self._binding.params:
            if p.source == "ctx":
                kwargs[p.name] = ctx
                continue
            if p.source == "node_input":
                value = node_input
            else:
                container: Any = state if p.source == "state" else (node_input if isinstance(node_input, dict) else {})
                if p.name in container:
                    value = container[p.name]
                elif p.default is not inspect.Parameter.empty:
                    kwargs[p.name] = p.default
                    continue
                else:
                    where = "session state" if p.source == "state" else "the node input"
                    raise WorkflowDataError(
                        f"Node {self.name}: parameter {p.name!r} has no value in {where} and no default.",
                        parameter=p.name,
                    )
            if p.adapter is not None and value is not None and not (p.plain_type and type(value) is p.plain_type):
                try:
                    value = p.adapter.validate_python(value)
                except ValidationError as exc:
                    raise WorkflowDataError(
                        f"Node {self.name}: parameter {p.name!r} has the wrong type.", errors=_errors(exc)
                    ) from exc
            kwargs[p.name] = value
        return kwargs

    async def run(self, ctx: Context) -> AsyncIterator[Any]:
        kwargs = self.bind(ctx)
        if self._kind == "async_gen":
            async for item in self.func(**kwargs):
                yield item
        elif self._kind == "gen":
            for item in self.func(**kwargs):
                yield item
        elif self._kind == "coro":
            result = await self.func(**kwargs)
            if result is not None:
                yield result
        else:
            result = self.func(**kwargs)
            if result is not None:
                yield result


@typing.overload
def node(func: Callable[..., Any], /) -> BaseNode: ...


@typing.overload
def node(
    func: None = None,
    /,
    *,
    name: str | None = None,
    rerun_on_resume: bool = False,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    require_confirmation: bool | Callable[..., bool] = False,
    input_schema: Any = None,
    output_schema: Any = None,
    parameter_binding: str = "state",
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    description: str | None = None,
    auth_config: Any = None,
) -> Callable[[Callable[..., Any]], BaseNode]: ...


def node(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    rerun_on_resume: bool = False,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    require_confirmation: bool | Callable[..., bool] = False,
    input_schema: Any = None,
    output_schema: Any = None,
    parameter_binding: str = "state",
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    description: str | None = None,
    auth_config: Any = None,
) -> BaseNode | Callable[[Callable[..., Any]], BaseNode]:
    """Decorate a function as a node: ``@node`` or ``@node(name=..., rerun_on_resume=True, ...)``.

    Options are :class:`BaseNode`'s (``rerun_on_resume``, ``retry_config``, ``timeout`` in
    seconds, ``require_confirmation``, ``auth_config``, schemas) and :class:`FunctionNode`'s
    (``parameter_binding``). ``parallel_worker=True`` maps the node over a list input (one run
    per item, outputs in input order, see :class:`~engine.ParallelWorker`), at most
    ``max_parallel_workers`` at a time.
    """

    def wrap(f: Callable[..., Any]) -> BaseNode:
        fn = FunctionNode(
            f,
            name=name,
            parameter_binding=parameter_binding,
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
            require_confirmation=require_confirmation,
            input_schema=input_schema,
            output_schema=output_schema,
            description=description,
            auth_config=auth_config,
        )
        if parallel_worker:
            from ._parallel import ParallelWorker  # a cycle: _parallel imports this module

            return ParallelWorker(fn, max_parallel_workers=max_parallel_workers)
        return fn

    return wrap(func) if func is not None else wrap


def as_node(value: Any) -> BaseNode:
    """Turn a node-like value into a node: a node stays itself (an agent made with
    ``parallel_worker=True`` is wrapped in a :class:`~engine.ParallelWorker`), a function becomes a
    FunctionNode.

    Raises:
        ConfigurationError: the value cannot be a node.
    """
    if isinstance(value, BaseNode):
        if getattr(value, "parallel_worker", False):  # e.g. LlmAgent(parallel_worker=True), as in ADK
            from ._parallel import ParallelWorker  # a cycle: _parallel imports this module

            return ParallelWorker(value, max_parallel_workers=getattr(value, "max_parallel_workers", None))
        return value
    if callable(value):
        return FunctionNode(value)
    raise ConfigurationError(f"{value!r} is not a node: use a function, a node, an agent or a workflow.")
