"""CPU seconds of the scale-out stack's server processes, read from ``/proc`` (Linux only).

A *kind* (``web``, ``worker``, ``nginx``, ``postgres``, ``redis``) is a set of root processes;
its CPU is that of every live process in their trees (the roots and all their descendants), each
counted as ``utime + stime + cutime + cstime`` of ``/proc/<pid>/stat`` in clock ticks
(``os.sysconf("SC_CLK_TCK")``). ``cutime + cstime`` is the CPU of a process's children that
exited and were waited for (and of their own reaped children), so a PostgreSQL backend that
ended during the window still counts, in its postmaster's ``cutime``; a live backend counts in
its own ``utime``. A process is counted once: when it is reaped its CPU moves from its own line to
its parent's ``cutime``, never both. The one gap is a process reaped in the microseconds between
reading its parent and reading it: that sample misses it (the next one has it in the parent's
``cutime``); a process that exited but was not waited for yet (a zombie) shows its own figures.

Only differences of two :meth:`CpuMeter.sample` s mean anything (the trees' ``cutime`` holds their
whole past). :func:`stack_roots` finds a stack's processes: its web processes (of one front), its
workers, that front's nginx (master, whose workers are its children), PostgreSQL's postmaster (the
parent of a backend of ours, ``pg_backend_pid()``) and ``redis-server`` (``INFO server``'s
``process_id``). PostgreSQL and Redis are the machine's servers: whatever else uses them counts too.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TICK = 1.0 / os.sysconf("SC_CLK_TCK")
"""Seconds per clock tick."""
KINDS = ("web", "worker", "nginx", "postgres", "redis")
"""The stack's server process kinds, in the order they are reported."""


def stat(pid: int) -> tuple[int, int] | None:
    """``(ppid, utime + stime + cutime + cstime)`` of ``pid`` in clock ticks, or ``None`` if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The name (field 2) is in parentheses and may hold spaces or parentheses: split after the last.
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); ppid is field 4, utime..cstime fields 14..17.
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def _children() -> dict[int, list[int]]:
    """Every live process's children, from one walk of ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            found = stat(int(entry.name))
            if found is not None:
                children.setdefault(found[0], []).append(int(entry.name))
    return children


def tree_ticks(roots: list[int], children: dict[int, list[int]] | None = None) -> int:
    """Clock ticks of the live trees under ``roots`` (see the module docstring); a root that is gone counts 0.

    Parents are read before their descendants, so a descendant reaped in between is missed rather
    than counted twice."""
    children = _children() if children is None else children
    seen: set[int] = set()
    total = 0
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found = stat(pid)
        if found is None:
            continue
        total += found[1]
        todo.extend(children.get(pid, []))
    return total


@dataclass
class CpuMeter:
    """CPU seconds per kind of ``roots`` (kind → root pids); subtract two :meth:`sample` s."""

    roots: dict[str, list[int]]

    def sample(self) -> dict[str, float]:
        """``{kind: CPU seconds so far, …, "total": their sum, "at": time.monotonic()}``."""
        children = _children()
        seconds = {kind: tree_ticks(pids, children) * TICK for kind, pids in self.roots.items()}
        return {**seconds, "total": sum(seconds.values()), "at": time.monotonic()}


def difference(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """``after - before`` per key (CPU seconds, and ``at``: the wall seconds between them)."""
    return {key: after[key] - before[key] for key in after}


def own_cpu() -> float:
    """CPU seconds of this process (the load's clients: all its threads) so far."""
    times = os.times()
    return times.user + times.system


def postmaster_pid(sql: Any) -> int:
    """The PostgreSQL server's postmaster: the parent of the backend that answers ``sql`` (a callable
    returning rows as dicts, as :meth:`Stack.sql`). Raises ``RuntimeError`` if the server is not a
    process of this machine."""
    backend = int(sql("SELECT pg_backend_pid() AS pid")[0]["pid"])
    found = stat(backend)
    if found is None:
        raise RuntimeError(f"PostgreSQL backend {backend} is not a process here: the server must run on this machine")
    return found[0]


def redis_pid(url: str) -> int:
    """``redis-server``'s pid, from ``INFO server`` of the Redis at ``url``. Raises ``RuntimeError`` if
    it is not a process of this machine."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        pid = int(client.info("server")["process_id"])
    finally:
        client.close()
    if stat(pid) is None:
        raise RuntimeError(f"Redis process {pid} is not a process here: the server must run on this machine")
    return pid


def stack_roots(stack: Any, server: str) -> dict[str, list[int]]:
    """The root pids per kind (:data:`KINDS`) of ``stack`` (a started ``tests.scaleout.stack.Stack``)
    through its ``server`` front: that front's web processes and nginx, the workers, PostgreSQL and
    Redis. The other fronts' idle processes are not counted."""
    front = stack.fronts[server]
    assert front.nginx is not None
    return {
        "web": [proc.pid for proc in front.webs],
        "worker": [proc.pid for proc in stack.workers],
        "nginx": [front.nginx.pid],
        "postgres": [postmaster_pid(stack.sql)],
        "redis": [redis_pid(stack.redis_url)],
    }
