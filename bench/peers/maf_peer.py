"""Microsoft Agent Framework 1.23 peer: the email review loop as a ``WorkflowBuilder`` graph.

Six ``Executor`` subclasses exchange typed messages; ``request_human_review``
calls ``ctx.request_info(ReviewRequest, str)`` and its ``@response_handler``
forwards the answer. The workflow then sits in ``IDLE_WITH_PENDING_REQUESTS``
until ``workflow.run(responses={request_id: answer})``. Draft and feedback
live in the workflow's shared state (``ctx.set_state`` / ``ctx.get_state``).

Variants:
    live        -- one live ``Workflow`` object per session, kept in a dict
                   (nothing persisted; dropped when the session finishes).
    checkpoint  -- ``InMemoryCheckpointStorage`` shared by all sessions; every
                   start / resume builds a fresh ``Workflow`` (stateless
                   worker), resume = ``run(checkpoint_id=..., responses=...)``.
    file        -- the same with ``FileCheckpointStorage`` in a temp dir.

Building a workflow (six executors + ``build()``) costs ~0.6 ms and is part
of every operation of the checkpoint variants and of "start" for ``live``.
Checkpoints are written at the end of every superstep. The pause checkpoint
id is taken from ``Workflow.get_last_checkpoint_id()``.

Run: ``python -m bench.peers.maf_peer --sessions 20 --reps 1 --loops 1,10``.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script: make ``bench.peers`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from typing import Never

from agent_framework import (
    CheckpointStorage,
    Executor,
    FileCheckpointStorage,
    InMemoryCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    handler,
    register_checkpoint_type,
    response_handler,
)

from bench.peers import cli, common

WORKFLOW_NAME = "email_review"

MAX_SUPERSTEPS = 10_000_000
"""``max_iterations`` cap. MAF counts supersteps over the whole life of a run,
across ``responses=`` continuations and checkpoint restores (the counter is
stored in the checkpoint); the default of 100 would abort a session after
about 24 revise loops (4 supersteps per loop)."""


@dataclass
class DraftTrigger:
    """Message asking ``draft_email`` for a (new) draft."""


@dataclass
class ReviewRequest:
    """Payload of the ``request_info`` call shown to the human."""

    message: str
    draft: str


@dataclass
class ReviewAnswer:
    """The human's reply, forwarded to ``handle_human_review``."""

    answer: str


@dataclass
class RouteTaken:
    """Route chosen by ``handle_human_review`` for a terminal executor."""

    route: str


for _cls in (DraftTrigger, ReviewRequest, ReviewAnswer, RouteTaken):
    # Needed so FileCheckpointStorage may decode our message types.
    register_checkpoint_type(_cls)


class ProcessInput(Executor):
    """Store the complaint and reset the feedback."""

    @handler
    async def run(self, complaint: str, ctx: WorkflowContext[DraftTrigger]) -> None:
        """Start executor: receives the user text."""
        ctx.set_state("complaint", complaint)
        ctx.set_state("feedback", "")
        await ctx.send_message(DraftTrigger())


class DraftEmail(Executor):
    """Deterministic fake LLM call."""

    @handler
    async def run(self, _: DraftTrigger, ctx: WorkflowContext[str]) -> None:
        """Write the draft to state and pass it on for review."""
        draft = common.draft_email_text(ctx.get_state("complaint"), ctx.get_state("feedback", ""))
        ctx.set_state("draft", draft)
        await ctx.send_message(draft)


class RequestHumanReview(Executor):
    """Pause for the human with ``request_info``."""

    @handler
    async def run(self, draft: str, ctx: WorkflowContext) -> None:
        """Emit the request; the workflow becomes idle with a pending request."""
        await ctx.request_info(ReviewRequest(common.review_prompt(draft), draft), str)

    @response_handler
    async def on_answer(self, original: ReviewRequest, answer: str, ctx: WorkflowContext[ReviewAnswer]) -> None:
        """Forward the human's answer."""
        await ctx.send_message(ReviewAnswer(answer))


class HandleHumanReview(Executor):
    """Route on the answer; any other text becomes feedback for a new draft."""

    @handler
    async def run(self, msg: ReviewAnswer, ctx: WorkflowContext[DraftTrigger | RouteTaken]) -> None:
        """Send ``DraftTrigger`` (revise) or ``RouteTaken`` (approved / rejected)."""
        route = common.route_for_answer(msg.answer)
        if route == common.ROUTE_REVISE:
            ctx.set_state("feedback", msg.answer)
            await ctx.send_message(DraftTrigger())
        else:
            await ctx.send_message(RouteTaken(route))


class SendEmail(Executor):
    """Terminal executor of the approved route."""

    @handler
    async def run(self, _: RouteTaken, ctx: WorkflowContext[Never, str]) -> None:
        """Yield the final message as workflow output."""
        await ctx.yield_output(common.SENT_MESSAGE)


class RejectEmail(Executor):
    """Terminal executor of the rejected route."""

    @handler
    async def run(self, _: RouteTaken, ctx: WorkflowContext[Never, str]) -> None:
        """Yield the final message as workflow output."""
        await ctx.yield_output(common.REJECTED_MESSAGE)


def _is_route(route: str) -> Any:
    return lambda msg: isinstance(msg, RouteTaken) and msg.route == route


def _is_revise(msg: Any) -> bool:
    return isinstance(msg, DraftTrigger)


def build_workflow(storage: CheckpointStorage | None = None) -> Workflow:
    """Build a fresh workflow instance (fresh executors), checkpointing into ``storage``."""
    process = ProcessInput(id="process_input")
    draft = DraftEmail(id="draft_email")
    request = RequestHumanReview(id="request_human_review")
    handle = HandleHumanReview(id="handle_human_review")
    send = SendEmail(id="send_email")
    reject = RejectEmail(id="reject_email")
    return (
        WorkflowBuilder(
            max_iterations=MAX_SUPERSTEPS,
            name=WORKFLOW_NAME,
            start_executor=process,
            checkpoint_storage=storage,
        )
        .add_edge(process, draft)
        .add_edge(draft, request)
        .add_edge(request, handle)
        .add_edge(handle, draft, condition=_is_revise)
        .add_edge(handle, send, condition=_is_route(common.ROUTE_APPROVED))
        .add_edge(handle, reject, condition=_is_route(common.ROUTE_REJECTED))
        .build()
    )


def _outcome(result: Any) -> tuple[common.Outcome, str | None]:
    """Map a ``WorkflowRunResult`` to (outcome, pending request id)."""
    requests = result.get_request_info_events()
    if requests:
        event = requests[-1]
        return common.Paused(draft=event.data.draft), event.request_id
    outputs = result.get_outputs()
    state = result.get_final_state()
    if state != WorkflowRunState.IDLE or not outputs:
        raise common.VerificationError(f"unexpected final state {state} outputs={outputs!r}")
    return common.Finished(message=outputs[-1]), None


class MafDriver(common.AsyncPeerDriver):
    """Drives MAF workflows; see the module docstring for the three variants."""

    system = "maf"

    def __init__(self, variant: str) -> None:
        """``variant`` is ``"live"``, ``"checkpoint"`` or ``"file"``."""
        super().__init__(variant)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._storage: CheckpointStorage | None = None
        self._live: dict[str, tuple[Workflow, str]] = {}
        """live variant: session id -> (workflow, pending request id)."""
        self._paused: dict[str, tuple[str, str]] = {}
        """checkpoint variants: session id -> (checkpoint id, pending request id) (client side)."""

    async def aopen(self) -> None:
        """Create the checkpoint storage of the variant."""
        if self.variant == "file":
            self._tmp = tempfile.TemporaryDirectory(prefix="maf-bench-")
            self._storage = FileCheckpointStorage(self._tmp.name)
        elif self.variant == "checkpoint":
            self._storage = InMemoryCheckpointStorage()

    async def aclose(self) -> None:
        """Drop sessions and delete the temp dir."""
        self._live.clear()
        self._paused.clear()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _remember(self, session_id: str, wf: Workflow, outcome: common.Outcome, rid: str | None) -> None:
        if self.variant == "live":
            if rid is None:
                self._live.pop(session_id, None)
            else:
                self._live[session_id] = (wf, rid)
            return
        if rid is None:
            self._paused.pop(session_id, None)
            return
        checkpoint_id = wf.get_last_checkpoint_id()
        if checkpoint_id is None:
            raise common.VerificationError("paused without a checkpoint")
        self._paused[session_id] = (checkpoint_id, rid)

    async def astart(self, session_id: str, complaint: str) -> common.Outcome:
        """Build a workflow and run it with the complaint until ``request_info``."""
        wf = build_workflow(self._storage)
        outcome, rid = _outcome(await wf.run(complaint))
        self._remember(session_id, wf, outcome, rid)
        return outcome

    async def aresume(self, session_id: str, answer: str) -> common.Outcome:
        """Answer the pending request (live object, or restore checkpoint + responses)."""
        if self.variant == "live":
            wf, rid = self._live[session_id]
            result = await wf.run(responses={rid: answer})
        else:
            checkpoint_id, rid = self._paused[session_id]
            wf = build_workflow(self._storage)
            result = await wf.run(checkpoint_id=checkpoint_id, responses={rid: answer})
        outcome, new_rid = _outcome(result)
        self._remember(session_id, wf, outcome, new_rid)
        return outcome

    def storage_bytes(self) -> int | None:
        """Bytes of checkpoint files (file variant only)."""
        return None if self._tmp is None else common.dir_bytes(self._tmp.name)

    def versions(self) -> dict[str, str]:
        """Versions of the MAF packages."""
        return common.package_versions("agent-framework-core", "pydantic")

    def notes(self) -> str:
        """How the variant is wired."""
        return {
            "live": "one live Workflow per session, run(responses=...)",
            "checkpoint": "InMemoryCheckpointStorage, fresh Workflow per op, run(checkpoint_id=..., responses=...)",
            "file": "FileCheckpointStorage(tmp dir), fresh Workflow per op, run(checkpoint_id=..., responses=...)",
        }[self.variant]


VARIANTS = {"live": MafDriver, "checkpoint": MafDriver, "file": MafDriver}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (see ``--help``)."""
    return cli.run_cli(MafDriver.system, VARIANTS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
