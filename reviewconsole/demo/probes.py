"""Probe workflows for the scale-out and fault tests: a registrable module (``WORKFLOWS``), on the
list only when named or when ``REVIEWCONSOLE_TEST_WORKFLOWS=1`` (never in a real deployment).

``probe``: START → intake → work → review → finish. Each node appends one line,
``<session id> <node> <pid>``, to the file named by ``$REVIEWCONSOLE_EXEC_LOG`` as it *starts*,
so a test counts executions per node across processes, runs killed halfway included (lines
under 4 KiB appended with ``O_APPEND`` never interleave). ``work`` waits ``seconds`` (async, so
the lease keeper renews the lease meanwhile), or until a file ``<exec log>.release-<label>``
exists; ``review`` asks a person when ``ask`` is true
(free text, queue ``probe``); ``finish`` ends the session with ``done: <answer>``.

The root's version is ``$REVIEWCONSOLE_PROBE_VERSION`` (default ``"1"``); versions listed in
``$REVIEWCONSOLE_PROBE_KEEP`` (comma-separated) stay resumable, as a deployment that keeps the
previous definition would: a test restarts processes with other values to deploy a new version.

Importing it also registers the outbox probe consumer (``outbox_probe.py``) when
``$REVIEWCONSOLE_PROBE_OUTBOX_HOLD`` is set.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from reviewconsole.demo.outbox_probe import register
from reviewconsole.workflows import Context, Event, Model, RequestInput, Workflow, WorkflowSpec

__all__ = ["KIND", "WORKFLOWS", "ProbeInput", "build", "probe_spec", "specs"]

KIND = "probe"


class ProbeInput(BaseModel):
    """What starts a probe: a label, how long ``work`` takes (seconds), whether to ask."""

    label: str = Field(default="", max_length=200)
    seconds: float = Field(default=0.0, ge=0, le=600)
    ask: bool = True


def _executed(ctx: Context, node: str) -> None:
    path = os.environ.get("REVIEWCONSOLE_EXEC_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{ctx.session_id} {node} {os.getpid()}\n")


def intake(ctx: Context, node_input: dict[str, Any]) -> Event:
    _executed(ctx, "intake")
    return Event(state={"label": node_input.get("label", "")}, output=node_input)


async def work(ctx: Context, node_input: dict[str, Any]) -> dict[str, Any]:
    _executed(ctx, "work")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + float(node_input.get("seconds") or 0.0)
    log, label = os.environ.get("REVIEWCONSOLE_EXEC_LOG"), node_input.get("label")
    release = Path(f"{log}.release-{label}") if log and label else None
    while (left := deadline - loop.time()) > 0 and not (release is not None and release.exists()):
        await asyncio.sleep(min(left, 0.05))
    return node_input


def review(ctx: Context, node_input: dict[str, Any]) -> Any:
    _executed(ctx, "review")
    if not node_input.get("ask", True):
        return "skipped"
    return RequestInput(
        interrupt_id="review",
        message=f"Probe {node_input.get('label') or ctx.session_id}: approve or reject.",
        metadata={"queue": "probe"},
    )


def finish(ctx: Context, node_input: Any) -> Event:
    _executed(ctx, "finish")
    answer = node_input.get("result", node_input) if isinstance(node_input, dict) else node_input
    return Event(message=f"done: {answer}")


def build(model: Model | None = None, *, version: str = "1") -> Workflow:
    """The probe workflow at ``version`` (``model`` is unused: no agents)."""
    return Workflow(
        "probe",
        edges=[("START", intake, work, review, finish)],
        input_schema=ProbeInput,
        description="Counts node executions for the fault tests.",
        version=version,
    )


def probe_spec(version: str = "1", keep: tuple[str, ...] = ()) -> WorkflowSpec:
    """The probe's registry entry at ``version``, still resuming sessions of ``keep`` versions."""

    def builder(v: str) -> Any:
        return lambda model=None: build(model, version=v)

    return WorkflowSpec(
        name="probe",
        title="Probe (tests only)",
        kind=KIND,
        queue="probe",
        build=builder(version),
        input_schema=ProbeInput,
        description="A test workflow that records every node execution.",
        previous=tuple(builder(v) for v in keep if v != version),
    )


def specs() -> list[WorkflowSpec]:
    """The probe as the environment configures it (see the module docstring)."""
    keep = tuple(v for v in os.environ.get("REVIEWCONSOLE_PROBE_KEEP", "").split(",") if v)
    return [probe_spec(os.environ.get("REVIEWCONSOLE_PROBE_VERSION", "1"), keep)]


WORKFLOWS = specs()
"""The probe at the version the environment names, read once when the module is imported."""

register()  # the outbox relay's kill -9 probe, when $REVIEWCONSOLE_PROBE_OUTBOX_HOLD is set
