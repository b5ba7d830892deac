"""Command line shared by every benchmarked system's module: ``--variant``, ``--sessions``, ...

A peer module calls :func:`run_cli` with its driver factories; it runs the selected metrics of
:mod:`bench.peers.measure` and prints JSON lines on stdout. **stdlib only**.
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence

from bench.peers.common import PeerDriver, VerificationError
from bench.peers.measure import BenchConfig, Emitter, log, measure_loops, measure_memory, measure_start_resume

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
        log(
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
            log(f"[{system}/{variant}] VERIFICATION FAILED: {exc}")
            status = 1
    return status
