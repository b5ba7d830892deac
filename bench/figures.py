"""The figures of ``run_bench.py``: its records gathered per system/variant, the one table, the
targets of issue 8 judged against the figures, and the report that prints them.

:func:`collect` turns the JSON records of ours and the peers into one row per ``system/variant``;
:func:`format_table` renders those rows (the last columns compare each peer with its counterpart
of ours, :data:`COUNTERPART`); :func:`targets` says for each of issue 8's targets the figure and
whether it is met; :func:`report` puts them together with the machine, the config, the storage
breakdown and the console's figures (``bench_console.py``).

Apart from ``run_bench.py`` (which runs the subprocesses and holds the command line) so that
each module holds one concern: this one only reads records, it runs nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from bench.peers import common

OURS = "reviewconsole"
OURS_MEMORY = f"{OURS}/memory"
OURS_ORM = f"{OURS}/orm"
IN_MEMORY_PEERS = ("langgraph/memory", "adk/memory", "maf/live", "maf/checkpoint")
"""Peers keeping sessions in the process: compared with ``reviewconsole/memory``."""
STORED_PEERS = ("langgraph/sqlite", "adk/sqlite", "maf/file")
"""Peers keeping sessions in SQLite or files: compared with ``reviewconsole/orm``."""
OURS_POSTGRES = f"{OURS}/postgres"
POSTGRES_PEERS = ("langgraph/postgres",)
"""Peers keeping sessions in PostgreSQL: compared with ``reviewconsole/postgres`` (same server)."""
COUNTERPART = {
    **{p: OURS_MEMORY for p in IN_MEMORY_PEERS},
    **{p: OURS_ORM for p in STORED_PEERS},
    **{p: OURS_POSTGRES for p in POSTGRES_PEERS},
}
KB = 1024
"""Bytes in the KB of the targets (and in KiB columns)."""


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def draft_bytes_per_loop(k: int, reps: int) -> float:
    """Bytes of the draft texts themselves per revise loop, as the harness's loop sessions write
    them (session ``rep`` of k: complaint ``complaint_for(k * 1000 + rep)``; one copy per loop)."""
    from bench.ours import draft_bytes

    return statistics.fmean(draft_bytes(common.complaint_for(k * 1000 + rep), k) for rep in range(max(reps, 1)))


def collect(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One row of figures per ``system/variant``, in run order."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records:
        if "system" not in r or r.get("metric") in (None, "meta"):
            continue
        key = f"{r['system']}/{r['variant']}"
        row = rows.setdefault(key, {"loops": {}, "memory": [], "errors": []})
        metric = r["metric"]
        if metric in ("start", "resume"):
            row[metric] = r
        elif metric == "resume_after_loops":
            row["loops"][r["k"]] = r
        elif metric == "memory":
            row["memory"].append(r)
        elif metric == "storage_breakdown":
            row["breakdown"] = r
        elif metric == "error":
            row["errors"].append(r.get("error") or f"{r.get('module')} exited {r.get('returncode')}")
    for row in rows.values():
        mem = row.pop("memory")
        row["memory_runs"] = len(mem)
        row["rss"] = _median(m.get("rss_bytes_per_session") for m in mem)
        row["traced"] = _median(m.get("tracemalloc_bytes_per_session") for m in mem)
        row["storage_paused"] = _median(m.get("storage_bytes_per_session") for m in mem)
        ok = [lr for k, lr in sorted(row["loops"].items()) if lr.get("status") == "ok"]
        grown = [lr for lr in ok if lr.get("storage_growth_bytes_per_loop") is not None]
        row["growth"] = row["growth_k"] = row["beyond_drafts"] = None
        if grown:
            last = grown[-1]  # the most loops: the least page-size rounding
            row["growth"] = last["storage_growth_bytes_per_loop"]
            row["growth_k"] = last["k"]
            row["beyond_drafts"] = row["growth"] - draft_bytes_per_loop(last["k"], int(last.get("reps", 1)))
        row["flat"] = None
        if ok and ok[0]["k"] == 1 and len(ok) > 1:
            row["flat"] = (ok[-1]["k"], ok[-1]["cpu_ms"] / ok[0]["cpu_ms"])
    return rows


def _cpu(row: dict[str, Any] | None, metric: str) -> float | None:
    rec = (row or {}).get(metric)
    return None if rec is None else float(rec["cpu_ms_per_op"])


def _rate(row: dict[str, Any], metric: str) -> float | None:
    rec = row.get(metric)
    return None if rec is None else float(rec["ops_per_s"])


def _times(peer: float | None, ours: float | None) -> str:
    """``peer / ours`` as ``12.3×`` (how many times ours is faster or smaller), ``-`` if unknown."""
    if peer is None or ours is None or ours <= 0:
        return "-"
    return f"{peer / ours:.2f}×" if peer / ours < 10 else f"{peer / ours:.1f}×"


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_table(rows: dict[str, dict[str, Any]], ks: Sequence[int]) -> str:
    """The one table: a row per system/variant; the last columns compare each peer with ours."""
    head = [
        "system/variant",
        "start CPU ms",
        "starts/s",
        "resume CPU ms",
        "resumes/s",
        *[f"k={k} ms" for k in ks],
        "k max/k=1",
        "KiB/paused RSS",
        "KiB/paused traced",
        "B/paused stored",
        "B/loop stored",
        "B/loop beyond drafts",
        "vs ours: start",
        "resume",
        "RSS",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in rows.items():
        cells = [
            key + (" (ERROR)" if row["errors"] else ""),
            _f(_cpu(row, "start")),
            _f(_rate(row, "start"), 0),
            _f(_cpu(row, "resume")),
            _f(_rate(row, "resume"), 0),
        ]
        for k in ks:
            lr = row["loops"].get(k)
            if lr is None:
                cells.append("-")
            elif lr.get("status") == "ok":
                cells.append(_f(lr["cpu_ms"]))
            else:
                ext = lr.get("extrapolated_cpu_ms")
                cells.append("skipped" + (f" (≈{ext:,.0f} extrapolated)" if ext is not None else ""))
        cells.append("-" if row["flat"] is None else f"{row['flat'][1]:.2f} (k={row['flat'][0]})")
        cells.append(_f(row["rss"] and row["rss"] / KB, 1))
        cells.append(_f(row["traced"] and row["traced"] / KB, 1))
        cells.append(_f(row["storage_paused"], 0))
        cells.append(_f(row["growth"], 0))
        cells.append(_f(row["beyond_drafts"], 0))
        ours = rows.get(COUNTERPART.get(key, ""))
        if ours is None:
            cells += ["-", "-", "-"]
        else:
            cells.append(_times(_cpu(row, "start"), _cpu(ours, "start")))
            cells.append(_times(_cpu(row, "resume"), _cpu(ours, "resume")))
            cells.append(_times(row["rss"], ours["rss"]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "NOT met")


def targets(rows: dict[str, dict[str, Any]], console: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """``(target, figure, met | NOT met | n/a)`` for each of issue 8's and issue 18's targets."""
    out: list[tuple[str, str, str]] = []
    mem, orm = rows.get(OURS_MEMORY), rows.get(OURS_ORM)

    def faster(ours_key: str, ours: dict[str, Any] | None, peer: str, factor: float, metric: str) -> None:
        ours_ms, peer_ms = _cpu(ours, metric), _cpu(rows.get(peer), metric)
        name = f"{ours_key} {metric} ≥ {factor:g}× {peer}"
        if ours_ms is None or peer_ms is None:
            out.append((name, "not measured", _verdict(None)))
            return
        ratio = peer_ms / ours_ms
        out.append((name, f"{ratio:.2f}× ({ours_ms:.2f} vs {peer_ms:.2f} CPU ms)", _verdict(ratio >= factor)))

    for metric in ("start", "resume"):
        faster(OURS_MEMORY, mem, "langgraph/memory", 10, metric)
        peers = [(p, _cpu(rows.get(p), metric)) for p in (*IN_MEMORY_PEERS, *STORED_PEERS)]
        measured = [(p, ms) for p, ms in peers if ms is not None]
        best = min(measured, key=lambda pm: pm[1])[0] if measured else "maf/live"
        faster(OURS_MEMORY, mem, best, 5, metric)
    for metric in ("start", "resume"):
        faster(OURS_ORM, orm, "langgraph/sqlite", 3, metric)
        faster(OURS_ORM, orm, "maf/file", 3, metric)
    postgres = rows.get(OURS_POSTGRES)
    if postgres or rows.get("langgraph/postgres"):  # run only with $BENCH_DATABASE_URL
        for metric in ("start", "resume"):
            faster(OURS_POSTGRES, postgres, "langgraph/postgres", 2, metric)
    for key, row in ((OURS_MEMORY, mem), (OURS_ORM, orm)):
        name = f"{key} resume at k=1000 ≤ 1.2× k=1"
        lr1, lr1000 = (row or {}).get("loops", {}).get(1), (row or {}).get("loops", {}).get(1000)
        if not lr1 or not lr1000 or lr1000.get("status") != "ok":
            out.append((name, "not measured", _verdict(None)))
            continue
        ratio = lr1000["cpu_ms"] / lr1["cpu_ms"]
        tail = ""
        if lr1000.get("revise_tail_cpu_ms") and lr1.get("revise_tail_cpu_ms"):
            tail = f"; revise resumes {lr1000['revise_tail_cpu_ms'] / lr1['revise_tail_cpu_ms']:.2f}×"
        figure = f"{ratio:.2f}× ({lr1000['cpu_ms']:.2f} vs {lr1['cpu_ms']:.2f} CPU ms{tail})"
        out.append((name, figure, _verdict(ratio <= 1.2)))
    name = f"{OURS_MEMORY} ≤ 5 KB ({5 * KB} B) per paused session"
    if mem and mem["rss"] is not None:
        figure = f"{mem['rss']:,.0f} B peak RSS, {mem['traced']:,.0f} B traced"
        out.append((name, figure, _verdict(max(mem["rss"], mem["traced"] or 0) <= 5 * KB)))
    else:
        out.append((name, "not measured", _verdict(None)))
    name = f"{OURS_ORM} ≤ 3 KB ({3 * KB} B) stored per revise loop beyond the draft texts"
    if orm and orm["beyond_drafts"] is not None:
        drafts = orm["growth"] - orm["beyond_drafts"]
        figure = (
            f"{orm['beyond_drafts']:,.0f} B ({orm['growth']:,.0f} B file growth at k={orm['growth_k']} "
            f"− {drafts:,.0f} B of draft text)"
        )
        out.append((name, figure, _verdict(orm["beyond_drafts"] <= 3 * KB)))
    else:
        out.append((name, "not measured", _verdict(None)))
    if console is not None:
        from bench.bench_console import TARGETS_MS, target_figures

        for label, (figure, ms) in target_figures(console).items():
            limit = TARGETS_MS[label]
            out.append((f"console: {label} < {limit:g} ms", figure, _verdict(None if ms is None else ms < limit)))
    else:
        for label in ("webhook → websocket p95", "decision → next interrupt p95", "inbox page, 100,000 pending"):
            out.append((f"console: {label}", "not measured (--no-console or failed)", _verdict(None)))
    out += [(name, f"not in this run: {command} says met or not", _verdict(None)) for name, command in ELSEWHERE]
    return out


ELSEWHERE = (
    ("scale-out ≤ 50 ms server CPU per session; at half capacity webhook → socket p95 < 100 ms, "
     "decision → next p95 < 150 ms", "bench/load_cpu.py (PostgreSQL, Redis)"),
    ("live fan-out to 1,000 sockets p95 < 250 ms", "bench/bench_fanout.py"),
    ("inbox at 1,000,000 items: first page, filtered page, search < 100 ms", "bench/bench_inbox_postgres.py"),
)  # fmt: skip
"""Issue 18's targets measured by commands of their own (a stack, a million rows), each printing
whether it is met: listed with the others so the report names every target."""


def breakdown_lines(rows: dict[str, dict[str, Any]], top: int = 8) -> list[str]:
    orm = rows.get(OURS_ORM, {})
    b = orm.get("breakdown")
    if not b:
        return []
    tables = list(b["tables_bytes_per_loop"].items())
    parts = [f"{name} {v['payload']:,.0f}" for name, v in tables[:top]]
    rest = sum(v["payload"] for _, v in tables[top:])
    return [
        f"{OURS_ORM} storage per revise loop by table and index (one session, {b['loops']} loops; "
        f"row payload bytes, dbstat): {b['payload_growth_bytes_per_loop']:,.0f} B payload, "
        f"{b['file_growth_bytes_per_loop']:,.0f} B file; drafts themselves {b['draft_bytes_per_loop']:,.0f} B.",
        "  " + "; ".join(parts) + (f"; {len(tables) - top} more {rest:,.0f}" if tables[top:] else ""),
    ]


def report(
    rows: dict[str, dict[str, Any]],
    ks: Sequence[int],
    console: dict[str, Any] | None,
    meta: dict[str, Any],
    notes: Sequence[str],
) -> str:
    m = meta["machine"]
    cfg = meta["config"]
    lines = [
        f"# Benchmarks, {meta['date']}: commit {meta['commit']}",
        f"machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram_gib']} GiB RAM, Python {m['python']}, "
        f"Linux {m['kernel']}; load average {m['loadavg_1m']:.2f} at the start, "
        f"{meta.get('loadavg_end', float('nan')):.2f} at the end",
        f"config: {cfg['sessions']} sessions × {cfg['reps']} reps, k = {cfg['loops']} "
        f"({cfg['loop_reps'] or cfg['reps']} sessions per k, loop budget {cfg['loop_budget_s']:g} s per variant"
        + (f", {', '.join(cfg['loop_budget'])}" if cfg["loop_budget"] else "")
        + f"), {cfg['memory_runs']} memory run(s) per variant, {cfg['warmup']} warm-up sessions",
        "",
        format_table(rows, ks),
        "",
        "CPU ms = time.process_time() per operation, median of the reps (k columns: median of the sessions",
        "per k, one approve timed after k revise loops). /s = operations per wall-clock second.",
        "KiB/paused: growth of peak RSS and of the tracemalloc'd heap per paused session (500 paused, fresh",
        "process; median of the memory runs). B/loop stored: file growth per revise loop at the largest k",
        "measured (SQLite WAL folded in); beyond drafts: minus the bytes of one copy of each loop's draft.",
        "'vs ours': the peer's figure / ours (reviewconsole/memory for in-memory peers, reviewconsole/orm for",
        "SQLite and file peers, reviewconsole/postgres for langgraph/postgres): > 1 means ours is that",
        "many times faster / smaller.",
        "A 'skipped' k did not fit in the variant's loop budget (ADK replays its whole history on every",
        "resume, so driving a session to k loops costs O(k²)); its figure is a linear fit over the resumes",
        "measured, not a measurement.",
    ]
    extra = breakdown_lines(rows)
    if extra:
        lines += ["", *extra]
    errors = [f"{key}: {e}" for key, row in rows.items() for e in row["errors"]]
    if errors or notes:
        lines += ["", *[f"NOTE: {n}" for n in notes], *[f"ERROR: {e}" for e in errors]]
    if console is not None:
        from bench.bench_console import report as console_report

        lines += ["", console_report(console)]
    lines += ["", "## Targets (issue 8)", "", "| target | figure | status |", "|---|---|---|"]
    lines += [f"| {t} | {fig} | {status} |" for t, fig, status in targets(rows, console)]
    return "\n".join(lines)
