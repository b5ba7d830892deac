"""``load_cpu.py``'s figures: one step's (:func:`step_figures`), and the tables and targets (:func:`report`).

Apart from the load itself so that each module holds one concern and stays under the line limit.
"""

from __future__ import annotations

from typing import Any

from bench.bench_console import percentiles
from bench.proc_cpu import KINDS

TARGET_CPU_MS = 50.0  # server CPU per completed session
TARGET_SOCKET_P95_MS = 100.0  # webhook → reviewer's socket, at half capacity
TARGET_NEXT_P95_MS = 150.0  # decision → next item, at half capacity


def _decisions(stack: Any, sids: list[str]) -> list[str]:
    """What is wrong with the decisions stored for these sessions: each completed one must have
    exactly two items, decided ``revise`` then ``approve``; a session not completed must not have
    more decided items than that. Returns one line per session that is wrong."""
    rows = stack.sql(
        "SELECT s.id, s.status, array_remove(array_agg(i.decision ORDER BY i.id), NULL) AS decisions"
        " FROM workflow_sessions_workflowsession s LEFT JOIN inbox_item i ON i.session_id = s.id"
        " WHERE s.id = ANY(%s) GROUP BY s.id, s.status",
        sids,
    )
    wrong = []
    for row in rows:
        decided = [d for d in row["decisions"] if d]
        if row["status"] == "completed" and decided != ["revise", "approve"]:
            wrong.append(f"session {row['id']} completed with decisions {decided}")
        elif row["status"] != "completed" and decided not in ([], ["revise"], ["revise", "approve"]):
            wrong.append(f"session {row['id']} {row['status']} with decisions {decided}")
    return wrong


def step_figures(
    stack: Any, step: Any, completed: int, elapsed: float, cpu: dict[str, float], client_cpu: float, load: float
) -> dict[str, Any]:
    """One step's figures (times in ms, CPU in ms per completed session): ``server``, ``step``,
    ``offered_per_s`` (None: unpaced), ``sessions`` (asked), ``accepted``, ``completed``,
    ``elapsed_s``, ``completed_per_s``, ``cpu_s`` (per kind and ``total``), ``cpu_ms`` (per kind and
    ``total``, per completed session), ``client_cpu_ms`` (this script's, per session),
    ``webhook_to_socket_ms``, ``revise_to_next_ms``, ``approve_to_completion_ms`` (percentiles),
    ``load`` (1-minute load average at the start) and ``errors`` (HTTP errors and wrong decisions)."""
    sent = {sid: s for sid, s in step.sessions.items() if s.sent is not None}
    ended = {
        r["id"]: r["updated_at"].timestamp()
        for r in stack.sql(
            "SELECT id::text AS id, updated_at FROM workflow_sessions_workflowsession"
            " WHERE status = 'completed' AND id = ANY(%s)",
            list(sent),
        )
    }
    to_socket, to_next, to_completion = [], [], []
    for sid, s in sent.items():
        assert s.sent is not None
        if s.told:
            to_socket.append(s.told[0] - s.sent)
        if s.revised is not None and len(s.told) > 1:
            to_next.append(s.told[1] - s.revised)
        if s.approved_wall is not None and str(sid) in ended:
            to_completion.append(ended[str(sid)] - s.approved_wall)
    ms, per = 1000.0, max(completed, 1)
    return {
        "server": step.server,
        "step": step.name,
        "offered_per_s": step.rate,
        "sessions": step.count,
        "accepted": step.accepted,
        "completed": completed,
        "elapsed_s": elapsed,
        "completed_per_s": completed / elapsed if elapsed else 0.0,
        "cpu_s": {k: v for k, v in cpu.items() if k != "at"},
        "cpu_ms": {k: v * ms / per for k, v in cpu.items() if k != "at"},
        "client_cpu_ms": client_cpu * ms / per,
        "webhook_to_socket_ms": percentiles([v * ms for v in to_socket]),
        "revise_to_next_ms": percentiles([v * ms for v in to_next]),
        "approve_to_completion_ms": percentiles([v * ms for v in to_completion]),
        "load": load,
        "errors": list(step.errors) + (_decisions(stack, list(sent)) if sent else []),
    }


def _p(p: dict[str, float]) -> str:
    return f"{p['p50']:.0f} / {p['p95']:.0f}" if p["n"] else "-"


def _over_idle(step: dict[str, Any]) -> str:
    idle = step.get("idle_cpu")
    if idle is None or not step["completed"]:
        return "-"
    return f"{(step['cpu_s']['total'] - idle * step['elapsed_s']) * 1000 / step['completed']:.0f}"


def _verdict(value: float | None, target: float, below: bool = False) -> str:
    if value is None:
        return "not measured"
    met = value < target if below else value <= target
    return f"{value:.0f} ms: {'met' if met else 'NOT met'}"


def report(figures: dict[str, Any]) -> str:
    """The tables, one per server, and the targets judged at each server's ``half`` step."""
    config, lines = figures["config"], []
    for server, data in figures["servers"].items():
        idle = data["idle"]
        lines.append(
            f"\n== {server}: {figures['stack']['web']} web processes behind nginx, {figures['stack']['workers']}"
            f" workers; {config['reviewers']} reviewers on sockets; capacity "
            + (f"{data['capacity']:.2f} sessions/s" if data["capacity"] is not None else "not measured")
        )
        if idle:
            lines.append(
                "idle CPU (s/s): " + ", ".join(f"{k} {idle[k]:.3f}" for k in KINDS) + f", total {idle['total']:.3f}"
            )
        head = f"{'step':9} {'offered/s':>9} {'done':>7} {'done/s':>6} {'load':>5} {'CPU ms/session':>14}"
        head += f" {'over idle':>9} " + " ".join(f"{k:>8}" for k in KINDS) + f" {'client':>7}"
        head += f"  {'hook->socket':>13} {'revise->next':>13} {'approve->done':>13} {'errors':>6}"
        lines += [head, "-" * len(head)]
        for step in data["steps"]:
            offered = f"{step['offered_per_s']:.2f}" if step["offered_per_s"] else "max"
            row = f"{step['step']:9} {offered:>9} {step['completed']:>3}/{step['sessions']:<3} "
            row += f"{step['completed_per_s']:>6.2f} {step['load']:>5.1f} {step['cpu_ms']['total']:>14.0f}"
            row += f" {_over_idle(step):>9} " + " ".join(f"{step['cpu_ms'][k]:>8.0f}" for k in KINDS)
            row += f" {step['client_cpu_ms']:>7.0f}  {_p(step['webhook_to_socket_ms']):>13}"
            row += f" {_p(step['revise_to_next_ms']):>13} {_p(step['approve_to_completion_ms']):>13}"
            row += f" {len(step['errors']):>6}"
            lines.append(row)
        lines.append("(latencies p50 / p95 ms; CPU ms per completed session; client: this script, not in the total)")
        half = next((s for s in data["steps"] if s["step"] == "half"), None)
        if half is not None:
            cpu = half["cpu_ms"]["total"] if half["completed"] else None
            socket = half["webhook_to_socket_ms"].get("p95")
            after = half["revise_to_next_ms"].get("p95")
            lines.append(f"targets at half capacity ({half['offered_per_s']:.2f}/s):")
            lines.append(f"  CPU per session <= {TARGET_CPU_MS:.0f} ms: {_verdict(cpu, TARGET_CPU_MS)}")
            lines.append(
                f"  webhook -> reviewer's socket p95 < {TARGET_SOCKET_P95_MS:.0f} ms: "
                + _verdict(socket, TARGET_SOCKET_P95_MS, below=True)
            )
            lines.append(
                f"  decision -> next item p95 < {TARGET_NEXT_P95_MS:.0f} ms: "
                + _verdict(after, TARGET_NEXT_P95_MS, below=True)
            )
        for step in data["steps"]:
            for error in step["errors"][:10]:
                lines.append(f"  error in {step['step']}: {error}")
    return "\n".join(lines)
