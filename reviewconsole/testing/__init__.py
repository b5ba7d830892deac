"""A testing kit for workflow authors: run a workflow in plain pytest, answer it, check where it went.

No Django, no database, no event loop of your own: the engine runs on an in-memory store, and the
calls are plain functions (they also work inside an ``async def`` test)::

    from reviewconsole.testing import run_workflow

    from my_workflows import WORKFLOWS

    def test_a_claim_is_approved():
        run = run_workflow(WORKFLOWS[0], {"amount": 120, "reason": "Train ticket"})
        run.assert_waiting(kind="input")
        run.answer("approve")
        run.assert_route("record_claim", "ask_approval", "decide", "pay")
        run.assert_outcome("completed", message="Paid 120.")

``workflow`` is a :class:`reviewconsole.workflows.WorkflowSpec` (built with ``build(None)``; its
agents use ``model``, by default the offline model with the spec's ``offline_policies``, as the
console's embedded default does) or a root node (a ``Workflow``, an ``LlmAgent``, any node).
``model`` may be a list of canned replies (a :class:`engine.ScriptedModel` is made of it: strings,
:class:`engine.FunctionCall`, ADK content dicts or callables, in call order) or any
:class:`engine.Model`.

Answers follow the engine (``docs/engine.md``) and the inbox (``reviewconsole/inbox/items/decisions.py``):
``"approve"``, ``"reject"`` or feedback text for a free-text interrupt, a dict valid against the
interrupt's ``response_schema`` for a form, ``{"confirmed": True}`` for a tool confirmation,
``{"status": "approved"}`` for a long-running tool. ``reviewconsole.testing.django`` (a pytest
plugin) runs the same through the console's services and database.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from engine import BaseNode, Event, InterruptRecord, Model, OfflineModel, Runner, ScriptedModel

from ..workflows import WorkflowSpec

__all__ = ["RunChecks", "WorkflowRun", "node_route", "run_workflow", "scripted"]

T = TypeVar("T")
_UNSET: Any = object()
_RUN_COUNTER = re.compile(r"@[^/]*$")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _call[T](coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end on the kit's own event loop (a daemon thread), from any context.

    One loop for every run keeps the in-memory stores on the loop they were made on, and lets a
    plain function be called from an ``async def`` test (whose loop is busy waiting on it).
    """
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="reviewconsole-testing", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()


def scripted(*replies: Any) -> ScriptedModel:
    """A scripted model answering ``replies`` in order (see :class:`engine.ScriptedModel`).

    Raises (when a run asks for more): ``engine.ModelError``, which fails the session.
    """
    return ScriptedModel(list(replies))


def _model_for(workflow: WorkflowSpec | BaseNode, model: Model | Sequence[Any] | None) -> Model | None:
    if isinstance(model, list | tuple):
        return ScriptedModel(list(model))
    if model is not None:
        return model
    if isinstance(workflow, WorkflowSpec):
        return OfflineModel(dict(workflow.offline_policies))
    return None


def node_route(path: str) -> str:
    """A node path without its root and run counters: ``"claim@1/ask@2"`` → ``"ask"``,
    ``"root@1/review@1/ask@1"`` → ``"review/ask"``; the root alone → ``""``."""
    parts = [_RUN_COUNTER.sub("", part) for part in path.split("/")[1:]]
    return "/".join(parts)


def run_workflow(
    workflow: WorkflowSpec | BaseNode,
    input: Any,
    *,
    model: Model | Sequence[Any] | None = None,
    state: dict[str, Any] | None = None,
    user_id: str = "test",
) -> WorkflowRun:
    """Start a session of ``workflow`` with ``input`` and run it until it completes or waits.

    ``input``: the starting message (a dict checked against the root's ``input_schema``, or text).
    ``state``: session keys to start with.

    Raises:
        engine.WorkflowDataError: ``input`` does not fit the input schema (``details["errors"]``).
        engine.GraphError: the workflow's graph is invalid (raised by its build).
    """
    root = workflow.build(None) if isinstance(workflow, WorkflowSpec) else workflow
    name = workflow.name if isinstance(workflow, WorkflowSpec) else None
    runner = Runner(root, app_name=name, model=_model_for(workflow, model))

    async def start() -> str:
        session = await runner.create_session(user_id=user_id, state=state)
        await runner.run(session.id, input, record=session)
        return session.id

    run = WorkflowRun(runner, _call(start()))
    run.refresh()
    return run


class RunChecks:
    """Assertions shared by :class:`WorkflowRun` and the Django plugin's ``ConsoleRun``.

    Subclasses provide ``status``, ``output``, ``error``, ``messages``, ``event_paths()`` (the
    node path of every stored event, oldest first, "" for none) and ``pending_kinds()``
    (``[(kind, node path)]`` of the pending interrupts).
    """

    status: str
    output: Any
    error: Any
    messages: list[str]

    def event_paths(self) -> list[str]:
        raise NotImplementedError

    def pending_kinds(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    @property
    def paths(self) -> list[str]:
        """Node paths that ran, in order (``"claim@1/ask_approval@1"``), without repeats in a row."""
        out: list[str] = []
        for path in self.event_paths():
            if path and (not out or out[-1] != path):
                out.append(path)
        return out

    @property
    def route(self) -> list[str]:
        """The nodes that ran, by name (:func:`node_route` of :attr:`paths`), without repeats in a row."""
        out: list[str] = []
        for path in self.paths:
            name = node_route(path)
            if name and (not out or out[-1] != name):
                out.append(name)
        return out

    # -- assertions -----------------------------------------------------------------------------

    def assert_route(self, *names: str, exact: bool = True) -> None:
        """Assert the nodes that ran were ``names`` (:attr:`route`), in this order.

        ``exact=False``: ``names`` appear in this order, with other nodes allowed between them.

        Raises:
            AssertionError: naming the route taken.
        """
        route = self.route
        if exact:
            ok = route == list(names)
        else:
            remaining = iter(route)
            ok = all(any(step == name for step in remaining) for name in names)
        if not ok:
            raise AssertionError(f"route taken: {route}; expected {'' if exact else 'in order '}{list(names)}")

    def assert_waiting(self, *, kind: str | None = None, count: int | None = None) -> None:
        """Assert the session waits on pending interrupts (of ``kind``; exactly ``count`` of them).

        Raises:
            AssertionError: saying the status and what is pending.
        """
        pending = self.pending_kinds()
        matching = [k for k, _ in pending if kind is None or k == kind]
        described = [f"{k} at {path}" for k, path in pending]
        if self.status != "waiting" or not matching:
            raise AssertionError(f"status {self.status!r}, pending: {described}")
        if count is not None and len(matching) != count:
            raise AssertionError(f"{len(matching)} pending, expected {count}: {described}")

    def assert_outcome(self, status: str = "completed", *, output: Any = _UNSET, message: Any = _UNSET) -> None:
        """Assert the session's status (and its output, and its last message, when given).

        Raises:
            AssertionError: saying the status, output, last message and error found.
        """
        last = self.messages[-1] if self.messages else None
        seen = f"status {self.status!r}, output {self.output!r}, last message {last!r}, error {self.error!r}"
        if self.status != status:
            raise AssertionError(f"expected status {status!r}; {seen}")
        if output is not _UNSET and self.output != output:
            raise AssertionError(f"expected output {output!r}; {seen}")
        if message is not _UNSET and last != message:
            raise AssertionError(f"expected last message {message!r}; {seen}")


class WorkflowRun(RunChecks):
    """One session of a workflow under test, as stored after its latest run.

    Attributes (read after each run; :meth:`refresh` reads them again):
        runner: the :class:`engine.Runner` (its ``store`` is an :class:`engine.InMemoryStore`).
        session_id: the session's id (str).
        status: ``"waiting"``, ``"completed"``, ``"failed"`` or ``"cancelled"``.
        output: the root node's output once completed (any JSON value, or None).
        state: the session's state (dict).
        error: the failure as the engine stored it (``{"code", "message", ...}``), or None.
        events: every stored :class:`engine.Event`, oldest first.
        pending: the pending :class:`engine.InterruptRecord` items, oldest first.
    """

    def __init__(self, runner: Runner, session_id: str) -> None:
        self.runner = runner
        self.session_id = session_id
        self.status = ""
        self.output: Any = None
        self.state: dict[str, Any] = {}
        self.error: Any = None
        self.events: list[Event] = []
        self.pending: list[InterruptRecord] = []

    def refresh(self) -> WorkflowRun:
        """Read the session, its events and its pending interrupts from the store again."""

        async def read() -> tuple[Any, list[Event], list[InterruptRecord]]:
            store = self.runner.store
            record = await store.get_session(self.session_id)
            return record, await store.list_events(self.session_id), await store.pending_interrupts(self.session_id)

        record, self.events, pending = _call(read())
        self.pending = sorted(pending, key=lambda r: r.created_at)
        # A plain string, as the console's kit gives (the engine's store may hold a SessionStatus member).
        self.status, self.output, self.state = str(record.status), record.output, dict(record.state)
        self.error = getattr(record, "error", None)
        return self

    # -- what happened --------------------------------------------------------------------------

    @property
    def messages(self) -> list[str]:
        """Texts the workflow wrote (node messages, agent replies), oldest first; streamed parts left out."""
        return [e.text for e in self.events if e.text and e.author != "user" and not e.partial]

    def event_paths(self) -> list[str]:
        return [e.node_info.path for e in self.events]

    def pending_kinds(self) -> list[tuple[str, str]]:
        return [(r.kind, r.path) for r in self.pending]

    # -- interrupts -----------------------------------------------------------------------------

    def interrupt(self, id: str | None = None, *, kind: str | None = None) -> InterruptRecord:
        """The pending interrupt with wire id (or local id) ``id``, else the only one of ``kind``
        (``"input"``, ``"confirmation"``, ``"long_running"``), else the only one pending.

        Raises:
            LookupError: none matches, or several do; the message lists what is pending.
        """
        found = [
            r for r in self.pending if (id is None or id in (r.id, r.local_id)) and (kind is None or r.kind == kind)
        ]
        if len(found) == 1:
            return found[0]
        listed = ", ".join(f"{r.id} ({r.kind} at {r.path})" for r in self.pending) or "nothing"
        wanted = " and ".join(p for p in (f"id {id!r}" if id else "", f"kind {kind!r}" if kind else "") if p)
        problem = "No pending interrupt" if not found else f"{len(found)} pending interrupts"
        raise LookupError(f"{problem} matches {wanted or 'the call'}; pending: {listed}.")

    def answer(
        self,
        answer: Any,
        *,
        id: str | None = None,
        kind: str | None = None,
        decided_by: str = "test",
    ) -> WorkflowRun:
        """Answer one pending interrupt (chosen as :meth:`interrupt` does) and run on until the
        session completes or waits again. Returns ``self``, refreshed.

        Raises:
            LookupError: no single interrupt matches ``id`` / ``kind``.
            engine.AnswerInvalidError: ``answer`` fails the interrupt's ``response_schema``
                (``details["errors"]``); nothing is stored.
        """
        target = self.interrupt(id, kind=kind)
        _call(self.runner.resume(self.session_id, {target.id: answer}, decided_by=decided_by))
        return self.refresh()
