"""Python calls per start and resume, attributed to the product's modules: a cost that does not
move with the machine's load, so two commits compare on a shared machine.

Drives a ``bench.ours`` variant: ``orm`` (the default: the email-review workflow, the console's ORM
store on SQLite, the in-memory channel layer, every registered outbox consumer) or ``memory`` (the
same workflow on the engine's ``InMemoryStore``, as ``run_bench.py`` times it), and counts, in every
thread, each Python function start and each call (``sys.monitoring`` ``PY_START`` and ``CALL``
events), charged to the innermost frame of ``reviewconsole/`` or ``engine/`` on the stack
("other": none, e.g. the event loop). ``--sessions`` sessions are started and then resumed once
each (``--answer``), after five untimed warm-up sessions.

Run it from the tree to measure, so that tree's ``bench.ours`` and code are imported; it may be
another commit's checkout::

    .venv/bin/python bench/calls.py --sessions 30
    .venv/bin/python bench/calls.py --variant memory --sessions 100
    (cd /tmp/old && PYTHONPATH=. /path/to/.venv/bin/python /path/to/bench/calls.py --sessions 30)

Prints, per phase, the events per operation, then the top modules and functions.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import types
from typing import Any

TOOL = 3  # a sys.monitoring tool id no profiler or debugger uses here


def _owner(counts: collections.Counter[tuple[str, str]]) -> Any:
    def charge(*_: Any) -> None:
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:
            name = frame.f_code.co_filename
            if "site-packages" not in name:
                for root in ("/reviewconsole/", "/engine/"):
                    if root in name:
                        counts[(root.strip("/") + "/" + name.split(root)[-1], frame.f_code.co_name)] += 1
                        return
            frame = frame.f_back
        counts[("other", "")] += 1

    return charge


async def _measure(driver: Any, sessions: int, answer: str) -> dict[str, collections.Counter[tuple[str, str]]]:
    await driver.aopen()
    for i in range(5):
        await driver.astart(f"warm{i}", "My order arrived broken")
        await driver.aresume(f"warm{i}", "make it shorter")
    mon = sys.monitoring
    phases: dict[str, collections.Counter[tuple[str, str]]] = {}
    mon.use_tool_id(TOOL, "bench.calls")
    try:
        for phase in ("start", "resume"):
            counts: collections.Counter[tuple[str, str]] = collections.Counter()
            charge = _owner(counts)
            mon.register_callback(TOOL, mon.events.PY_START, charge)
            mon.register_callback(TOOL, mon.events.CALL, charge)
            mon.set_events(TOOL, mon.events.PY_START | mon.events.CALL)
            for i in range(sessions):
                if phase == "start":
                    await driver.astart(f"s{i}", "My order arrived broken")
                else:
                    await driver.aresume(f"s{i}", answer)
            mon.set_events(TOOL, 0)
            phases[phase] = counts
    finally:
        mon.free_tool_id(TOOL)
        await driver.aclose()
    return phases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--variant", choices=("orm", "memory"), default="orm")
    parser.add_argument(
        "--answer",
        default="make it shorter",
        help="the resume's answer: feedback (a revise: the draft again, then a pause) or approve (to completion, "
        "as run_bench.py's resume)",
    )
    args = parser.parse_args(argv)
    from bench import ours

    driver = ours.OursDriver(args.variant)
    driver.open()  # orm: migrates, before the event loop (migrate is sync-only)
    for phase, counts in asyncio.run(_measure(driver, args.sessions, args.answer)).items():
        per_op = sum(counts.values()) / args.sessions
        print(f"{phase}: {per_op:,.0f} Python calls per operation")
        modules: collections.Counter[str] = collections.Counter()
        for (module, _), n in counts.items():
            modules[module] += n
        for module, n in modules.most_common(args.top):
            print(f"  {n / args.sessions:9,.0f}  {module}")
        print("  functions:")
        for (module, function), n in counts.most_common(args.top):
            print(f"  {n / args.sessions:9,.0f}  {module}:{function}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
