"""Resume cost against session history: the email review workflow after k revise loops.

For each k in 1, 10, 100, 1000 a fresh session of ``reviewconsole.demo.email_review`` (engine
only, the offline draft model, an ``InMemoryStore``) is driven through k drafts: k-1 answers of
reviewer feedback (``revise`` loops back to the draft model). Then ``--resumes`` more feedback
answers are timed one by one: each is ``Runner.resume`` (validate and store the answer, restore
the checkpoint, run ``handle_human_review`` → ``draft_email`` → ``request_human_review``, commit
the pause). The table gives the median microseconds per resume and its ratio to k=1.

The engine resumes from its checkpoint and never replays history, so the ratio stays near 1.0.
``events`` is the session's stored history when timing starts. The p90 column grows a little with
k on an ``InMemoryStore``: its events are Python objects, so the garbage collector's occasional
full passes cost more; a database store keeps them out of the process.

Usage::

    python bench/bench_resume.py [--ks 1,10,100,1000] [--resumes 41] [--profile]

``calls/resume`` counts the Python function calls of a resume (five more resumes, each under
cProfile: the median): a noise-free measure of the work, equal for every k when nothing grows
with history.
``--profile`` prints the top functions of those profiled resumes for the smallest and largest k.
Exits non-zero when the largest k costs more than ``--limit`` (default 1.2) times k=1.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import InMemoryStore, OfflineModel, Runner
from reviewconsole.demo import email_review

COUNTED = 5
"""Resumes run under the profiler to count function calls."""
FEEDBACK = ("make it shorter", "more formal please", "offer a refund", "mention a discount voucher")


async def prepare(k: int) -> tuple[Runner, str, OfflineModel]:
    """A session waiting on its k-th review."""
    model = OfflineModel({"draft_email": email_review.offline_draft})
    runner = Runner(email_review.build(model), InMemoryStore())
    session = await runner.create_session(user_id="bench")
    result = await runner.run(session.id, {"complaint": "My phone broke after two days and nobody answers."})
    for i in range(k - 1):
        result = await runner.resume(session.id, {result.interrupts[0].id: FEEDBACK[i % len(FEEDBACK)]})
    assert result.status == "waiting" and model.calls == k, (result.status, model.calls)
    return runner, session.id, model


async def time_resumes(runner: Runner, session_id: str, count: int, profiler: cProfile.Profile | None) -> list[float]:
    """Microseconds of each of ``count`` feedback resumes."""
    samples: list[float] = []
    for i in range(count):
        [pending] = await runner.store.pending_interrupts(session_id)
        answer = {pending.id: FEEDBACK[i % len(FEEDBACK)]}
        if profiler is not None:
            profiler.enable()
        started = time.perf_counter_ns()
        result = await runner.resume(session_id, answer)
        elapsed = time.perf_counter_ns() - started
        if profiler is not None:
            profiler.disable()
        assert result.status == "waiting"
        samples.append(elapsed / 1000)
    return samples


async def measure(k: int, resumes: int, profile: bool) -> dict[str, float | int | str]:
    runner, session_id, model = await prepare(k)
    events = len(await runner.store.list_events(session_id))
    checkpoint = (await runner.store.get_session(session_id)).checkpoint
    gc.collect()
    samples = await time_resumes(runner, session_id, resumes, None)
    # The same work counted, not timed: Python function calls per resume (noise-free), the median
    # of COUNTED resumes profiled one by one (ids are read from the OS 64 at a time: the resume
    # that reads the next batch makes a few more calls).
    profilers = [cProfile.Profile() for _ in range(COUNTED)]
    for profiler in profilers:
        await time_resumes(runner, session_id, 1, profiler)
    stats = pstats.Stats(*profilers)
    row: dict[str, float | int | str] = {
        "k": k,
        "median_us": statistics.median(samples),
        "p90_us": statistics.quantiles(samples, n=10)[-1] if len(samples) >= 10 else max(samples),
        "events": events,
        "checkpoint_bytes": len(json.dumps(checkpoint)),
        "calls_per_resume": statistics.median(pstats.Stats(p).total_calls for p in profilers),  # type: ignore[attr-defined]
        "model_calls": model.calls,
    }
    if profile:
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats("cumulative").print_stats(15)
        row["profile"] = out.getvalue()
    return row


async def warm_up() -> None:
    """Fill import-time and validator caches before anything is timed."""
    runner, session_id, _ = await prepare(3)
    await time_resumes(runner, session_id, 5, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", default="1,10,100,1000", help="history sizes (revise loops), comma separated")
    parser.add_argument("--resumes", type=int, default=101, help="timed resumes per k")
    parser.add_argument("--limit", type=float, default=1.2, help="largest ratio to k=1 that counts as flat")
    parser.add_argument("--profile", action="store_true", help="profile the smallest and largest k")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    asyncio.run(warm_up())
    rows = []
    for k in ks:
        rows.append(asyncio.run(measure(k, args.resumes, args.profile and k in (min(ks), max(ks)))))
    base = float(rows[0]["median_us"])
    print("Resume cost vs history: email review, offline draft model, InMemoryStore")
    print(
        f"{'k':>6} {'events':>8} {'checkpoint B':>13} {'calls/resume':>13} {'median µs':>10} {'p90 µs':>9} {'ratio':>6}"
    )
    for row in rows:
        ratio = float(row["median_us"]) / base
        print(
            f"{row['k']:>6} {row['events']:>8} {row['checkpoint_bytes']:>13} {row['calls_per_resume']:>13} "
            f"{float(row['median_us']):>10.0f} {float(row['p90_us']):>9.0f} {ratio:>6.2f}"
        )
    for row in rows:
        if "profile" in row:
            print(f"\n-- profile, k={row['k']} --\n{row['profile']}")
    worst = float(rows[-1]["median_us"]) / base
    flat = worst <= args.limit
    print(f"\nk={ks[-1]} costs {worst:.2f}× k={ks[0]}: {'flat' if flat else 'NOT flat'} (limit {args.limit}×)")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
