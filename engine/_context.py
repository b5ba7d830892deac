"""The context a node activation runs in.

A :class:`Context` is made for every run of a node (``name@n``). Nodes read ``node_input``,
``state``, ``resume_inputs`` and the session's identity from it; a parameter named ``ctx`` (or
annotated :class:`Context`) receives it. Composite nodes (workflows, agents, node tools) use the
``emit`` / ``commit`` / ``child`` methods to run children and persist progress.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._auth import auth_interrupt_id, credential_from
from ._events import Event, EventActions
from ._schemas import validate_state_delta
from ._state import State

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._node import BaseNode
    from ._runtime import RunSession

__all__ = ["Context", "Outcome"]


@dataclass(slots=True)
class Outcome:
    """How a node activation ended.

    ``status`` is ``"completed"`` (with ``output`` and ``route``), ``"waiting"`` (on the wire
    interrupt ids in ``interrupts``, or on a user message when ``awaiting_message``), or
    ``"failed"`` (with ``error``).
    """

    status: str
    output: Any = None
    route: Any = None
    interrupts: list[str] = field(default_factory=list)
    error: BaseException | None = None
    awaiting_message: bool = False

    @classmethod
    def completed(cls, output: Any = None, route: Any = None) -> Outcome:
        return cls("completed", output=output, route=route)

    @classmethod
    def waiting(cls, interrupts: list[str], *, awaiting_message: bool = False) -> Outcome:
        return cls("waiting", interrupts=interrupts, awaiting_message=awaiting_message)

    @classmethod
    def failed(cls, error: BaseException) -> Outcome:
        return cls("failed", error=error)


class Context:
    """One activation of one node.

    Attributes for node authors: ``node_input`` (the predecessor's output, or the session's
    input for the first node), ``state`` (:class:`~engine.State`), ``resume_inputs``
    (``{interrupt_id: answer}`` when a ``rerun_on_resume`` node runs again after a pause),
    ``session_id``, ``user_id``, ``app_name``, ``invocation_id``, ``node_path``, ``run_id``,
    ``branch``, ``attempt_count`` (1, then 2… when ``retry_config`` retries the node) and
    ``metadata`` (host-supplied run context, e.g. AG-UI forwarded props; never sent to a model).
    ``state_schema`` is the nearest enclosing workflow's ``state_schema`` (None: writes are not
    checked); :meth:`emit` validates state writes against it.
    """

    __slots__ = (
        "attempt_count",
        "author",
        "branch",
        "dynamic",
        "dynamic_answers",
        "dynamic_counts",
        "dynamic_running",
        "dynamic_stopped",
        "input_valid",
        "interrupt_ids",
        "isolation_scope",
        "messages",
        "node",
        "node_input",
        "node_path",
        "output_claimed",
        "output_for",
        "parent",
        "pending",
        "recovered",
        "resume_inputs",
        "route",
        "run_id",
        "saved",
        "session",
        "state",
        "state_schema",
    )

    def __init__(
        self,
        *,
        session: RunSession,
        node: BaseNode,
        path: str,
        run_id: str,
        node_input: Any = None,
        parent: Context | None = None,
        branch: str | None = None,
        author: str | None = None,
        isolation_scope: str | None = None,
        resume_inputs: dict[str, Any] | None = None,
        saved: Any = None,
        output_for: list[str] | None = None,
        state_schema: type[BaseModel] | None = None,
    ) -> None:
        self.session = session
        self.node = node
        self.node_path = path
        self.run_id = run_id
        self.node_input = node_input
        self.parent = parent
        self.branch = branch
        self.author = author or node.name
        self.isolation_scope = isolation_scope
        self.resume_inputs: dict[str, Any] = resume_inputs if resume_inputs is not None else {}
        self.saved = saved
        self.output_for = output_for or []
        self.state_schema: type[BaseModel] | None = (
            state_schema if state_schema is not None else (parent.state_schema if parent else None)
        )
        self.pending: list[Event] = []
        self.state = State(session.state)
        self.interrupt_ids: list[str] = []
        self.route: Any = None
        self.messages: list[Any] = []
        self.dynamic: dict[str, Any] = {}
        """Children started with :meth:`run_node`, by ``name@run``: finished (output) or waiting (slot)."""
        self.dynamic_counts: dict[str, int] = {}
        self.dynamic_answers: dict[str, Any] = {}
        """Answers (by wire id) for waiting children, handed over on resume."""
        self.dynamic_running: set[asyncio.Future[None]] = set()
        """One future per :meth:`run_node` call in progress, done when it returns or raises."""
        self.dynamic_stopped = False
        """True once this node waits on a child: a :meth:`run_node` call after that starts nothing."""
        self.output_claimed = False
        """True once a child was run with ``use_as_output=True``: its output event is this node's."""
        self.attempt_count = 1
        """Which attempt of this activation is running (1 for the first; ``retry_config`` retries)."""
        self.input_valid = False
        """True when ``node_input`` was validated against the node's ``input_schema`` already (the
        root's input, which :meth:`engine.Runner.start` validates before it stores it)."""
        self.recovered = False
        """True when this leaf runs again because a worker died while it ran: its code (and any
        effect it has) may have run before. The run is flagged with an event (scenario H26)."""

    # -- identity --------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def user_id(self) -> str:
        return self.session.user_id

    @property
    def app_name(self) -> str:
        return self.session.app_name

    @property
    def invocation_id(self) -> str:
        return self.session.invocation_id

    @property
    def metadata(self) -> dict[str, Any]:
        return self.session.metadata

    async def run_node(
        self, node: Any, node_input: Any = None, *, use_as_output: bool = False, run_id: str | None = None
    ) -> Any:
        """Run ``node`` (a node, agent, workflow or function) as a child of this activation and
        return its output (ADK 2.13 ``Context.run_node``; see :mod:`engine._dynamic`).

        The calling node should be ``rerun_on_resume``: after a pause it runs again, and the
        children that finished give their stored outputs back without running again.

        Raises:
            Exception: the child failed (its error). A child that waits stops this node, which
            waits on the child's interrupts.
        """
        from ._dynamic import run_node  # a cycle: _dynamic imports _node, which imports this module

        return await run_node(self, node, node_input, use_as_output=use_as_output, run_id=run_id)

    def get_auth_response(self, auth_config: Any) -> Any:
        """The credential given for ``auth_config`` (an :class:`~engine.AuthCredential`), or None.

        Read from the answer to this node's ``wf_auth:<path>`` request (ADK's
        ``Context.get_auth_response``; see :mod:`engine._auth`).
        """

        answer = self.resume_inputs.get(auth_interrupt_id(self.node_path))
        return None if answer is None else credential_from(answer, auth_config)

    # -- events ----------------------------------------------------------------------------

    def emit(self, event: Event) -> Event:
        """Stamp ``event`` with this activation's identity, apply its state delta, stream it.

        The node's pending state writes travel on the event. The event is stored at the
        activation's next commit.

        Raises:
            WorkflowDataError: the event's state writes fail the enclosing workflow's
                ``state_schema`` (keys with the ``app:``, ``user:`` or ``temp:`` prefix are not
                checked); nothing is applied.
        """
        delta = self.state.delta
        if delta:
            if event.actions is None:
                event.actions = EventActions(state_delta=dict(delta))
            else:
                event.actions.state_delta = {**delta, **event.actions.state_delta}
            delta.clear()
        if self.state_schema is not None and event.actions is not None and event.actions.state_delta:
            validate_state_delta(self.state_schema, event.actions.state_delta, f"Node {self.node_path}")
        # The identity is written into the event's fields directly: pydantic's __setattr__ costs
        # four calls a field, and Event validates nothing on assignment. Only fields that change.
        stamp: dict[str, Any] = {}
        if not event.author:
            stamp["author"] = self.author
        if event.invocation_id != self.session.invocation_id:
            stamp["invocation_id"] = self.session.invocation_id
        if event.branch is None and self.branch is not None:
            stamp["branch"] = self.branch
        if event.isolation_scope is None and self.isolation_scope is not None:
            stamp["isolation_scope"] = self.isolation_scope
        if stamp:
            event.__dict__.update(stamp)
            event.__pydantic_fields_set__.update(stamp)
        node_info = event.node_info
        if not node_info.path:
            node_info.__dict__["path"] = self.node_path
            node_info.__pydantic_fields_set__.add("path")
        if event.output is not None and node_info.output_for is None:
            node_info.output_for = [self.node_path, *self.output_for]
        self.session.apply(event)
        self.pending.append(event)
        return event

    def stream(self, event: Event) -> None:
        """Pass a partial event (e.g. a streamed text delta) to the run's listener; never stored."""
        if event.node_info.path == "":
            event.node_info.path = self.node_path
        event.invocation_id = self.session.invocation_id
        if self.session.listener is not None:
            self.session.listener.on_event(event)

    def flush_state(self) -> None:
        """Emit a state-only event if the node wrote state that no event carried yet."""
        if self.state.delta:
            self.emit(Event())

    async def commit(self, events: list[Event] | None = None) -> None:
        """Store this activation's pending events (plus ``events``) with a fresh checkpoint."""
        batch = self.pending + (events or [])
        self.pending = []
        await self.session.commit(batch)

    def child(
        self,
        node: BaseNode,
        *,
        run_id: str,
        node_input: Any = None,
        branch: str | None = None,
        author: str | None = None,
        resume_inputs: dict[str, Any] | None = None,
        saved: Any = None,
        output_for: list[str] | None = None,
        isolation_scope: str | None = None,
    ) -> Context:
        """A context for a child activation ``<this path>/<node>@<run_id>``."""
        return Context(
            session=self.session,
            node=node,
            path=f"{self.node_path}/{node.name}@{run_id}",
            run_id=run_id,
            node_input=node_input,
            parent=self,
            branch=branch if branch is not None else self.branch,
            author=author,
            isolation_scope=isolation_scope,
            resume_inputs=resume_inputs,
            saved=saved,
            output_for=output_for,
            state_schema=self.state_schema,
        )
