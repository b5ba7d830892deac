"""Workload definition and measurement harness shared by every benchmarked system.

This module is **stdlib only**: it is imported by the peer drivers running in
``bench/.peers-venv`` (LangGraph, Google ADK, Microsoft Agent Framework) and
must be importable from the project venv as well, so that our own engine can
be measured by exactly the same code.

Workload ("email review loop", after ADK's ``request_input`` sample)::

    process_input -> draft_email -> request_human_review -> handle_human_review
                         ^                                        |
                         +--------------- "revise" ---------------+
                                          "approved" -> send_email
                                          "rejected" -> reject_email

Plugging a system in
--------------------
Subclass :class:`PeerDriver` (or :class:`AsyncPeerDriver` for asyncio-only
frameworks), implement :meth:`PeerDriver.start` and :meth:`PeerDriver.resume`,
and call :func:`run_cli` with a mapping ``variant name -> driver factory``.
Each metric is emitted as one JSON object per line on stdout (see
:func:`emit`); diagnostics go to stderr.

Units used in record field names: ``*_ms`` milliseconds, ``*_s`` seconds,
``*_per_s`` operations per wall-clock second, ``*_bytes`` bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import resource
import sqlite3
import statistics
import sys
import time
import tracemalloc
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

# --------------------------------------------------------------------------
# Workload definition
# --------------------------------------------------------------------------

WORKLOAD = "email_review_loop"
"""Identifier of the workload, copied into every record."""

SCHEMA_VERSION = 1
"""Version of the JSON record layout emitted by :func:`emit`."""

NODE_NAMES = (
    "process_input",
    "draft_email",
    "request_human_review",
    "handle_human_review",
    "send_email",
    "reject_email",
)
"""Names every implementation uses for its nodes / executors."""

APPROVE = "approve"
REJECT = "reject"
ROUTE_APPROVED = "approved"
ROUTE_REJECTED = "rejected"
ROUTE_REVISE = "revise"

SENT_MESSAGE = "Draft approved and sent successfully."
"""Final message emitted by ``send_email``."""

REJECTED_MESSAGE = "Draft rejected."
"""Final message emitted by ``reject_email``."""


def complaint_for(index: int) -> str:
    """Return the user text that starts session number ``index``."""
    return f"Order #{index} arrived two weeks late and the box was damaged."


def feedback_for(loop: int) -> str:
    """Return the reviewer's revise instruction for revise loop ``loop`` (1-based)."""
    return f"Revision {loop}: be more apologetic and offer a refund."


def draft_email_text(complaint: str, feedback: str) -> str:
    """Deterministic stand-in for the LLM call of ``draft_email``.

    No network, no sleep: a few string operations, so the "model" costs the
    same (negligible) amount in every system.
    """
    text = (
        "Dear customer,\n\n"
        f"Thank you for contacting us about: {complaint}\n"
        "We are sorry for the inconvenience and are looking into it.\n"
    )
    if feedback:
        text += f"(feedback applied: {feedback})\n"
    return text + "\nKind regards,\nCustomer Support"


def review_prompt(draft: str) -> str:
    """Message shown to the human reviewer when the workflow pauses."""
    return (
        "Please review the following draft email and answer 'approve', "
        f"'reject', or feedback to revise.\n---\n{draft}\n---"
    )


def route_for_answer(answer: str) -> str:
    """Map a reviewer answer to the route taken by ``handle_human_review``."""
    if answer == APPROVE:
        return ROUTE_APPROVED
    if answer == REJECT:
        return ROUTE_REJECTED
    return ROUTE_REVISE


# --------------------------------------------------------------------------
# Driver interface
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paused:
    """The session is waiting for a human; ``draft`` is the draft under review."""

    draft: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The session ran to the end; ``message`` is the final user-facing message."""

    message: str


Outcome = Paused | Finished


class PeerDriver(ABC):
    """One system under test in one storage variant, driven synchronously.

    Lifecycle: ``open()`` once, any number of ``start``/``resume`` calls, then
    ``close()``. Sessions are independent; the harness calls ``resume`` only
    for sessions that are paused. Anything a real client would keep between
    two HTTP requests (ADK's function-call id, MAF's request / checkpoint id)
    may be kept by the driver in a per-session dict.
    """

    system: ClassVar[str]
    """System name, e.g. ``"langgraph"``."""

    def __init__(self, variant: str) -> None:
        """Remember the variant name (e.g. ``"memory"``, ``"sqlite"``)."""
        self.variant = variant

    def open(self) -> None:  # noqa: B027 - optional hook
        """Create storage (temp dirs, connections). Called once before use."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release storage. Called once at the end."""

    @abstractmethod
    def start(self, session_id: str, complaint: str) -> Outcome:
        """Create session ``session_id`` and run it until the first pause."""

    @abstractmethod
    def resume(self, session_id: str, answer: str) -> Outcome:
        """Answer the pending review of ``session_id`` and run to the next pause or end."""

    def storage_bytes(self) -> int | None:
        """Bytes of persistent storage (files) currently used, or ``None`` if in memory."""
        return None

    def versions(self) -> dict[str, str]:
        """Versions of the packages under test, copied into every record."""
        return {}

    def notes(self) -> str:
        """Free text describing how the variant is wired (copied into records)."""
        return ""


T = TypeVar("T")


class AsyncPeerDriver(PeerDriver):
    """Adapter for asyncio-only frameworks (ADK, MAF).

    Owns one event loop for the driver's lifetime and runs each operation with
    ``loop.run_until_complete`` (tens of microseconds of overhead per call).
    Subclasses implement :meth:`astart`, :meth:`aresume` and optionally
    :meth:`aopen` / :meth:`aclose`.
    """

    def __init__(self, variant: str) -> None:
        """Create the driver; the event loop is created in :meth:`open`."""
        super().__init__(variant)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _await(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None, "driver not opened"
        return self._loop.run_until_complete(coro)

    def open(self) -> None:
        """Create the event loop and run :meth:`aopen` on it."""
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._await(self.aopen())

    def close(self) -> None:
        """Run :meth:`aclose`, then shut the event loop down."""
        if self._loop is None:
            return
        try:
            self._await(self.aclose())
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()
            self._loop = None

    async def aopen(self) -> None:
        """Async part of :meth:`open`."""

    async def aclose(self) -> None:
        """Async part of :meth:`close`."""

    @abstractmethod
    async def astart(self, session_id: str, complaint: str) -> Outcome:
        """Async :meth:`PeerDriver.start`."""

    @abstractmethod
    async def aresume(self, session_id: str, answer: str) -> Outcome:
        """Async :meth:`PeerDriver.resume`."""

    def start(self, session_id: str, complaint: str) -> Outcome:
        """Run :meth:`astart` to completion on the driver's loop."""
        return self._await(self.astart(session_id, complaint))

    def resume(self, session_id: str, answer: str) -> Outcome:
        """Run :meth:`aresume` to completion on the driver's loop."""
        return self._await(self.aresume(session_id, answer))


DriverFactory = Callable[[], PeerDriver]


# --------------------------------------------------------------------------
# Helpers for drivers
# --------------------------------------------------------------------------


def package_versions(*names: str) -> dict[str, str]:
    """Installed versions of distributions ``names`` (``"missing"`` if absent)."""
    from importlib import metadata

    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def sqlite_file_bytes(path: str | Path) -> int:
    """Size of an SQLite database in bytes after folding its WAL into the main file.

    Runs ``PRAGMA wal_checkpoint(TRUNCATE)`` on a separate connection (so call
    it only between operations), then adds any remaining ``-wal`` /
    ``-journal`` file sizes.
    """
    path = Path(path)
    if not path.exists():
        return 0
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    total = path.stat().st_size
    for suffix in ("-wal", "-journal"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            total += extra.stat().st_size
    return total


def dir_bytes(path: str | Path) -> int:
    """Total size in bytes of the regular files below ``path``."""
    total = 0
    stack = [Path(path)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


@dataclass(slots=True)
class BenchConfig:
    """Benchmark parameters (see ``--help`` of :func:`run_cli`)."""

    sessions: int = 500
    """Sessions per repetition for the start / resume / memory metrics."""
    reps: int = 3
    """Repetitions per metric; the reported figure is the median."""
    loops: list[int] = field(default_factory=lambda: [1, 10, 100, 1000])
    """Revise-loop counts ``k`` for the resume-after-k-loops metric."""
    loop_reps: int = 3
    """Repetitions (fresh sessions) per ``k``; reduced automatically to fit the budget."""
    loop_budget_s: float = 120.0
    """Wall-clock budget in seconds for the whole loops metric of one variant."""
    warmup: int = 20
    """Untimed sessions run first (imports, caches, lazy initialisation)."""


class VerificationError(AssertionError):
    """A system produced a result different from the workload's specification."""


def _expect_paused(outcome: Outcome, complaint: str, feedback: str, what: str) -> None:
    expected = draft_email_text(complaint, feedback)
    if not isinstance(outcome, Paused) or outcome.draft != expected:
        raise VerificationError(f"{what}: expected Paused(draft={expected!r}), got {outcome!r}")


def _expect_finished(outcome: Outcome, message: str, what: str) -> None:
    if not isinstance(outcome, Finished) or outcome.message != message:
        raise VerificationError(f"{what}: expected Finished({message!r}), got {outcome!r}")


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _maxrss_bytes() -> int:
    """Peak resident set size of this process in bytes (Linux reports KiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


class Emitter:
    """Writes JSON-line records to a stream, adding the common identification fields."""

    def __init__(self, system: str, variant: str, versions: Mapping[str, str], notes: str) -> None:
        """Bind the identification fields copied into every record."""
        self._base: dict[str, Any] = {
            "schema": SCHEMA_VERSION,
            "workload": WORKLOAD,
            "system": system,
            "variant": variant,
        }
        self._versions = dict(versions)
        self._notes = notes
        self.label = f"{system}/{variant}"
        """``system/variant``, used as prefix of stderr progress lines."""

    def emit(self, metric: str, **fields: Any) -> dict[str, Any]:
        """Print one record as a JSON line on stdout and return it."""
        record = {**self._base, "metric": metric, **fields}
        record["versions"] = self._versions
        if self._notes:
            record["notes"] = self._notes
        print(json.dumps(record, sort_keys=False), flush=True)
        return record


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def verify_workload(driver: PeerDriver, prefix: str = "verify") -> None:
    """Exercise every route once and raise :class:`VerificationError` on a mismatch.

    Covers: start -> approve, start -> reject, start -> 2 revises -> approve.
    """
    c = complaint_for(-1)
    _expect_paused(driver.start(f"{prefix}-a", c), c, "", "start")
    _expect_finished(driver.resume(f"{prefix}-a", APPROVE), SENT_MESSAGE, "approve")
    _expect_paused(driver.start(f"{prefix}-r", c), c, "", "start")
    _expect_finished(driver.resume(f"{prefix}-r", REJECT), REJECTED_MESSAGE, "reject")
    _expect_paused(driver.start(f"{prefix}-v", c), c, "", "start")
    for j in (1, 2):
        _expect_paused(driver.resume(f"{prefix}-v", feedback_for(j)), c, feedback_for(j), "revise")
    _expect_finished(driver.resume(f"{prefix}-v", APPROVE), SENT_MESSAGE, "approve after revise")


def measure_start_resume(factory: DriverFactory, cfg: BenchConfig, emitter: Emitter) -> list[dict[str, Any]]:
    """Metrics 1 and 2: start -> first pause, and resume("approve") -> completion.

    Per repetition a fresh driver (fresh storage) starts ``cfg.sessions``
    sessions, then resumes each of them once with ``approve``. CPU time is
    ``time.process_time()`` (all threads of the process; ``sys_ms_per_op`` is
    its kernel part, from ``os.times()``), wall time is ``time.perf_counter()``.
    Results are verified after each timed loop. ``loadavg_1m`` (one value per
    rep) shows whether other processes competed for the CPUs.
    """
    start_cpu: list[float] = []
    start_sys: list[float] = []
    start_rate: list[float] = []
    resume_cpu: list[float] = []
    resume_sys: list[float] = []
    resume_rate: list[float] = []
    loadavg: list[float] = []
    n = cfg.sessions
    for rep in range(cfg.reps):
        driver = factory()
        driver.open()
        try:
            verify_workload(driver, prefix=f"verify{rep}")
            for i in range(cfg.warmup):
                driver.start(f"w{i}", complaint_for(i))
                driver.resume(f"w{i}", APPROVE)
            ids = [f"s{rep}-{i}" for i in range(n)]
            complaints = [complaint_for(i) for i in range(n)]
            outcomes: list[Outcome] = [Finished("")] * n

            gc.collect()
            s0, c0, w0 = os.times().system, time.process_time(), time.perf_counter()
            for i in range(n):
                outcomes[i] = driver.start(ids[i], complaints[i])
            s1, c1, w1 = os.times().system, time.process_time(), time.perf_counter()
            for i in range(n):
                _expect_paused(outcomes[i], complaints[i], "", f"start {ids[i]}")
            start_cpu.append((c1 - c0) * 1000 / n)
            start_sys.append((s1 - s0) * 1000 / n)
            start_rate.append(n / (w1 - w0))

            gc.collect()
            s0, c0, w0 = os.times().system, time.process_time(), time.perf_counter()
            for i in range(n):
                outcomes[i] = driver.resume(ids[i], APPROVE)
            s1, c1, w1 = os.times().system, time.process_time(), time.perf_counter()
            for i in range(n):
                _expect_finished(outcomes[i], SENT_MESSAGE, f"resume {ids[i]}")
            resume_cpu.append((c1 - c0) * 1000 / n)
            resume_sys.append((s1 - s0) * 1000 / n)
            resume_rate.append(n / (w1 - w0))
            loadavg.append(os.getloadavg()[0])
            _log(
                f"[{emitter.label}] rep {rep + 1}/{cfg.reps}: "
                f"start {start_cpu[-1]:.2f} ms cpu (sys {start_sys[-1]:.2f}), {start_rate[-1]:.0f}/s; "
                f"resume {resume_cpu[-1]:.2f} ms cpu (sys {resume_sys[-1]:.2f}), {resume_rate[-1]:.0f}/s; "
                f"load {loadavg[-1]:.2f}"
            )
        finally:
            driver.close()
    # loadavg_1m: system load at the end of each rep; > ~1 means other processes
    # competed for the 2 vCPUs and the wall-clock rates are pessimistic.
    common = {"sessions": n, "reps": cfg.reps, "verified": True, "loadavg_1m": loadavg}
    return [
        emitter.emit(
            "start",
            cpu_ms_per_op=_median(start_cpu),
            sys_ms_per_op=_median(start_sys),
            ops_per_s=_median(start_rate),
            rep_cpu_ms_per_op=start_cpu,
            rep_ops_per_s=start_rate,
            **common,
        ),
        emitter.emit(
            "resume",
            cpu_ms_per_op=_median(resume_cpu),
            sys_ms_per_op=_median(resume_sys),
            ops_per_s=_median(resume_rate),
            rep_cpu_ms_per_op=resume_cpu,
            rep_ops_per_s=resume_rate,
            **common,
        ),
    ]


@dataclass(slots=True)
class _CostModel:
    """Least-squares fit ``t(j) = a + b * j`` of the cost of the j-th resume."""

    samples: list[tuple[int, float, float]] = field(default_factory=list)
    """(j, cpu seconds, wall seconds) of observed resumes."""

    def add(self, j: int, cpu_s: float, wall_s: float) -> None:
        self.samples.append((j, cpu_s, wall_s))

    def _fit(self, index: int) -> tuple[float, float] | None:
        xs = [float(s[0]) for s in self.samples]
        ys = [s[index] for s in self.samples]
        if len(set(xs)) < 2:
            return None
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        b = max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx)
        a = max(0.0, my - b * mx)
        return a, b

    def predict_one(self, j: int, *, wall: bool) -> float | None:
        """Predicted seconds of the j-th resume, or ``None`` without enough data."""
        fit = self._fit(2 if wall else 1)
        return None if fit is None else fit[0] + fit[1] * j

    def predict_drive(self, k: int) -> float | None:
        """Predicted wall seconds to run one session through k revises plus the approve."""
        fit = self._fit(2)
        if fit is None:
            return None
        a, b = fit
        n = k + 1  # resumes 1..k+1
        return a * n + b * n * (n + 1) / 2


def measure_loops(factory: DriverFactory, cfg: BenchConfig, emitter: Emitter) -> list[dict[str, Any]]:
    """Metric 3: cost of one resume (``approve``) after k revise loops.

    For each k (ascending) and each repetition, a fresh session is started and
    driven through k revise answers (each checked to carry the latest
    feedback), then the (k+1)th resume, an ``approve``, is timed alone
    (``cpu_ms`` / ``wall_ms``, medians over repetitions). ``revise_tail_cpu_ms``
    is the median CPU ms of the last (up to) 10 revise resumes before it, a
    less noisy companion figure.
    Storage growth per loop (bytes) is reported for file-backed variants.

    Budget: the per-resume cost is fitted as ``a + b*j`` from every resume seen
    so far (ADK replays its event history, so ``b`` is large there). A k whose
    predicted drive time does not fit in what is left of ``cfg.loop_budget_s``
    is run with fewer repetitions, or skipped with ``status="skipped: over
    budget"`` and an extrapolated (clearly labelled) resume cost.
    """
    records: list[dict[str, Any]] = []
    model = _CostModel()
    driver = factory()
    driver.open()
    t_begin = time.perf_counter()
    try:
        for i in range(cfg.warmup):
            driver.start(f"w{i}", complaint_for(i))
            driver.resume(f"w{i}", APPROVE)
        for k in sorted(set(cfg.loops)):
            remaining = cfg.loop_budget_s - (time.perf_counter() - t_begin)
            per_session = model.predict_drive(k)
            reps = cfg.loop_reps
            if per_session is not None and per_session > 0:
                reps = min(reps, int(remaining // per_session))
            if reps < 1:
                pred_cpu = model.predict_one(k + 1, wall=False)
                pred_wall = model.predict_one(k + 1, wall=True)
                _log(
                    f"[{emitter.label}] k={k}: skipped, predicted "
                    f"{per_session:.0f} s per session > {remaining:.0f} s left"
                )
                records.append(
                    emitter.emit(
                        "resume_after_loops",
                        k=k,
                        status="skipped: over budget",
                        budget_s=cfg.loop_budget_s,
                        predicted_drive_s=per_session,
                        extrapolated_cpu_ms=None if pred_cpu is None else pred_cpu * 1000,
                        extrapolated_wall_ms=None if pred_wall is None else pred_wall * 1000,
                        extrapolation="linear fit t(j)=a+b*j over all resumes measured so far",
                    )
                )
                continue
            cpu_ms: list[float] = []
            wall_ms: list[float] = []
            growth: list[float] = []
            tail_cpu_ms: list[float] = []
            for rep in range(reps):
                sid = f"k{k}-r{rep}"
                complaint = complaint_for(k * 1000 + rep)
                _expect_paused(driver.start(sid, complaint), complaint, "", f"start {sid}")
                bytes0 = driver.storage_bytes()
                for j in range(1, k + 1):
                    c0, w0 = time.process_time(), time.perf_counter()
                    out = driver.resume(sid, feedback_for(j))
                    c1, w1 = time.process_time(), time.perf_counter()
                    model.add(j, c1 - c0, w1 - w0)
                    if j > k - 10:
                        tail_cpu_ms.append((c1 - c0) * 1000)
                    _expect_paused(out, complaint, feedback_for(j), f"revise {j} of {sid}")
                bytes1 = driver.storage_bytes()
                if bytes0 is not None and bytes1 is not None:
                    growth.append((bytes1 - bytes0) / k)
                gc.collect()
                c0, w0 = time.process_time(), time.perf_counter()
                out = driver.resume(sid, APPROVE)
                c1, w1 = time.process_time(), time.perf_counter()
                _expect_finished(out, SENT_MESSAGE, f"approve after {k} loops of {sid}")
                model.add(k + 1, c1 - c0, w1 - w0)
                cpu_ms.append((c1 - c0) * 1000)
                wall_ms.append((w1 - w0) * 1000)
            _log(
                f"[{emitter.label}] k={k}: resume "
                f"{_median(cpu_ms):.2f} ms cpu, {_median(wall_ms):.2f} ms wall ({reps} reps)"
            )
            rec: dict[str, Any] = {
                "k": k,
                "status": "ok",
                "cpu_ms": _median(cpu_ms),
                "wall_ms": _median(wall_ms),
                "rep_cpu_ms": cpu_ms,
                "rep_wall_ms": wall_ms,
                "reps": reps,
                "verified": True,
            }
            if tail_cpu_ms:
                # Robust companion of the single timed op: the last (up to) 10 revise resumes.
                rec["revise_tail_cpu_ms"] = _median(tail_cpu_ms)
            if growth:
                rec["storage_growth_bytes_per_loop"] = _median(growth)
            records.append(emitter.emit("resume_after_loops", **rec))
    finally:
        driver.close()
    return records


def measure_memory(factory: DriverFactory, cfg: BenchConfig, emitter: Emitter) -> list[dict[str, Any]]:
    """Metric 4: memory per paused session. Run it in a fresh process.

    After ``cfg.warmup`` untimed sessions, ``cfg.sessions`` sessions are
    started and left paused; the growth of peak RSS (``ru_maxrss``) divided by
    the session count is the primary figure. A second batch of the same size
    is then started under ``tracemalloc``; the Python-heap bytes still
    allocated after ``gc.collect()`` divided by the batch size is reported as
    ``tracemalloc_bytes_per_session`` (excludes C-level allocations such as
    SQLite's page cache). Storage bytes per paused session are added for
    file-backed variants.
    """
    n = cfg.sessions
    driver = factory()
    driver.open()
    try:
        for i in range(cfg.warmup):
            driver.start(f"w{i}", complaint_for(i))
        gc.collect()
        rss0 = _maxrss_bytes()
        bytes0 = driver.storage_bytes()
        for i in range(n):
            driver.start(f"m{i}", complaint_for(i))
        gc.collect()
        rss1 = _maxrss_bytes()
        bytes1 = driver.storage_bytes()

        tracemalloc.start()
        gc.collect()
        traced0 = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            driver.start(f"t{i}", complaint_for(i))
        gc.collect()
        traced1 = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        # Every paused session must still be resumable.
        _expect_finished(driver.resume("m0", APPROVE), SENT_MESSAGE, "resume after memory run")
    finally:
        driver.close()
    rec: dict[str, Any] = {
        "sessions": n,
        "rss_bytes_per_session": (rss1 - rss0) / n,
        "rss_method": "delta of resource.getrusage(RUSAGE_SELF).ru_maxrss (peak RSS) / sessions",
        "tracemalloc_bytes_per_session": (traced1 - traced0) / n,
        "peak_rss_bytes": rss1,
    }
    if bytes0 is not None and bytes1 is not None:
        rec["storage_bytes_per_session"] = (bytes1 - bytes0) / n
    _log(
        f"[{emitter.label}] memory: "
        f"{rec['rss_bytes_per_session'] / 1024:.1f} KiB RSS, "
        f"{rec['tracemalloc_bytes_per_session'] / 1024:.1f} KiB traced per paused session"
    )
    return [emitter.emit("memory", **rec)]


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

METRICS = ("start_resume", "loops", "memory")
"""Metric groups selectable with ``--metrics``."""


def _int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def build_arg_parser(system: str, variants: Iterable[str]) -> argparse.ArgumentParser:
    """Argument parser shared by every peer module."""
    variants = list(variants)
    p = argparse.ArgumentParser(
        description=f"Email-review-loop benchmark for {system}. JSON lines on stdout.",
    )
    p.add_argument("--variant", action="append", choices=variants, help="repeatable; default: all")
    p.add_argument("--sessions", type=int, default=500, help="sessions per rep (default 500)")
    p.add_argument("--reps", type=int, default=3, help="repetitions per metric (default 3)")
    p.add_argument("--loops", type=_int_list, default=[1, 10, 100, 1000], help="k list, e.g. 1,10,100,1000")
    p.add_argument("--loop-reps", type=int, default=None, help="sessions per k (default --reps)")
    p.add_argument(
        "--loop-budget-s",
        type=float,
        default=120.0,
        help="wall seconds allowed for the loops metric per variant (default 120)",
    )
    p.add_argument("--warmup", type=int, default=20, help="untimed warm-up sessions (default 20)")
    p.add_argument(
        "--metrics",
        default=",".join(METRICS),
        help=f"comma list of {', '.join(METRICS)} (default all; run memory in a fresh process)",
    )
    return p


def run_cli(
    system: str,
    factories: Mapping[str, Callable[[str], PeerDriver]],
    argv: Sequence[str] | None = None,
) -> int:
    """Entry point of a peer module: parse args, run the selected metrics, print JSON lines.

    ``factories`` maps a variant name to a callable ``(variant) -> PeerDriver``.
    Returns a process exit code (non-zero if verification failed).
    """
    args = build_arg_parser(system, factories).parse_args(argv)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise SystemExit(f"unknown metrics: {sorted(unknown)}")
    cfg = BenchConfig(
        sessions=args.sessions,
        reps=args.reps,
        loops=args.loops,
        loop_reps=args.loop_reps if args.loop_reps is not None else args.reps,
        loop_budget_s=args.loop_budget_s,
        warmup=args.warmup,
    )
    variants = args.variant or list(factories)
    if "memory" in metrics and (len(metrics) > 1 or len(variants) > 1):
        _log(
            "warning: the memory metric should run alone, for one variant, in a fresh "
            "process (run_peers.py does this); figures of this run may be mixed"
        )
    status = 0
    for variant in variants:
        make = factories[variant]

        def factory(make: Callable[[str], PeerDriver] = make, variant: str = variant) -> PeerDriver:
            return make(variant)

        probe = factory()
        emitter = Emitter(system, variant, probe.versions(), probe.notes())
        emitter.emit(
            "meta",
            python=platform.python_version(),
            machine=platform.machine(),
            cpus=os.cpu_count(),
            pid=os.getpid(),
            config={
                "sessions": cfg.sessions,
                "reps": cfg.reps,
                "loops": cfg.loops,
                "loop_reps": cfg.loop_reps,
                "loop_budget_s": cfg.loop_budget_s,
                "warmup": cfg.warmup,
                "metrics": metrics,
            },
        )
        try:
            if "start_resume" in metrics:
                measure_start_resume(factory, cfg, emitter)
            if "loops" in metrics:
                measure_loops(factory, cfg, emitter)
            if "memory" in metrics:
                measure_memory(factory, cfg, emitter)
        except VerificationError as exc:
            emitter.emit("error", error=str(exc))
            _log(f"[{system}/{variant}] VERIFICATION FAILED: {exc}")
            status = 1
    return status
