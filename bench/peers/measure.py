"""Measurement of one benchmarked system: start/resume rates, resume after k loops, memory.

Every system (our engine and each peer) is driven through a :class:`~bench.peers.common.PeerDriver`
by exactly these functions, so the figures compare like with like. **stdlib only**, like
:mod:`bench.peers.common`: the peers' virtualenv imports it too. Each function emits JSON records
through an :class:`Emitter` (one object per line on stdout) and returns them.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.peers.common import (
    APPROVE,
    REJECT,
    REJECTED_MESSAGE,
    SCHEMA_VERSION,
    SENT_MESSAGE,
    WORKLOAD,
    DriverFactory,
    Finished,
    Outcome,
    Paused,
    PeerDriver,
    VerificationError,
    complaint_for,
    draft_email_text,
    feedback_for,
)


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


def log(msg: str) -> None:
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
            log(
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
                log(
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
            log(
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
    log(
        f"[{emitter.label}] memory: "
        f"{rec['rss_bytes_per_session'] / 1024:.1f} KiB RSS, "
        f"{rec['tracemalloc_bytes_per_session'] / 1024:.1f} KiB traced per paused session"
    )
    return [emitter.emit("memory", **rec)]
