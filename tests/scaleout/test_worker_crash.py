"""Workers killed with ``kill -9`` in the middle of a run, on PostgreSQL (H13, H15, lease keeper).

The probe workflow logs every node execution (session, node, pid) as the node starts, so the
counts below include runs that died halfway. Leases last 2 s; each worker sweeps for dead runs
every second.
"""

from __future__ import annotations

import pytest

from tests.scaleout.clients import Reviewer
from tests.scaleout.stack_parts import wait_for

pytestmark = pytest.mark.scaleout

NODES = ["intake", "work", "review", "finish"]


def _completed_once(stack, sid):
    """Every node's events were stored once; each node path appears in one run of the node."""
    events = stack.assert_events_whole(sid)
    paths = {e["node_path"] for e in events if e["node_path"]}
    assert paths == {f"probe@1/{node}@1" for node in NODES}, paths
    outputs = [e["node_path"] for e in events if (e["data"].get("nodeInfo") or {}).get("outputFor")]
    assert len(outputs) == len(set(outputs)), f"an output was stored twice: {outputs}"
    return events


def test_a_worker_killed_mid_node_is_picked_up_and_completed(healthy):
    stack = healthy
    sid = stack.start_probe(label="kill", seconds=2.5, ask=False)  # 2.5 s: longer than the lease
    _, pid = wait_for(lambda: next((e for e in stack.executions(sid) if e[0] == "work"), None), 20, "work started")
    victim = stack.worker_with_pid(pid)
    stack.kill(victim)
    row = stack.wait_status(sid, "completed", timeout=30)
    counts = stack.execution_counts(sid)
    # intake completed before the crash and did not run again; work was cut off and ran again
    # on the surviving worker; review and finish ran once, after it.
    assert counts == {"intake": 1, "work": 2, "review": 1, "finish": 1}
    survivors = {p for n, p in stack.executions(sid) if n in ("review", "finish")}
    assert pid not in survivors
    _completed_once(stack, sid)
    assert row["output"] is None or "done" in str(row["output"]) or row["status"] == "completed"
    # The run commits "completed", then gives its lease back in a write of its own.
    wait_for(lambda: stack.session(sid)["lease_owner"] == "", 10, "the lease given back")


def test_a_node_slower_than_the_lease_runs_once_with_two_live_workers(healthy):
    """The lease keeper renews while the node works, so the other worker's sweep never steals it."""
    stack = healthy
    sid = stack.start_probe(label="slow", seconds=3.5, ask=False)
    stack.wait_status(sid, "completed", timeout=30)
    assert stack.execution_counts(sid) == {"intake": 1, "work": 1, "review": 1, "finish": 1}
    _completed_once(stack, sid)


def test_h15_a_decision_runs_only_the_nodes_after_the_interrupt(healthy):
    stack = healthy
    sid = stack.start_probe(label="h15")
    stack.wait_status(sid, "waiting")
    before = stack.execution_counts(sid)
    assert before == {"intake": 1, "work": 1, "review": 1}
    reviewer = Reviewer(stack, "manager").login()
    item = wait_for(lambda: next((i for i in reviewer.items() if i["session_id"] == sid), None), 10, "item listed")
    assert reviewer.decide(item["id"], "approve").status_code == 302
    stack.wait_status(sid, "completed")
    after = stack.execution_counts(sid)
    assert after - before == {"finish": 1}
    _completed_once(stack, sid)


def test_h13_the_whole_server_killed_with_items_pending_and_a_run_mid_node(healthy):
    stack = healthy
    waiting = [stack.start_probe(label=f"h13-{n}") for n in range(2)]
    for sid in waiting:
        stack.wait_status(sid, "waiting")
    busy = stack.start_probe(label="h13-busy", seconds=30)
    wait_for(lambda: "work" in dict(stack.executions(busy)), 20, "the busy run inside work")

    for proc in [*stack.webs, *stack.workers]:  # the whole server, kill -9
        stack.kill(proc)
    # Let the restarted run of the busy node finish at once; all else is as the crash left it.
    (stack.exec_log.parent / f"{stack.exec_log.name}.release-h13-busy").touch()
    for proc in [*stack.webs, *stack.workers]:
        stack.launch(proc)
    for proc in [*stack.webs, *stack.workers]:
        stack.wait_ready(proc)

    reviewer = Reviewer(stack, "manager").login()
    listed = {i["session_id"]: i for i in reviewer.items()}
    assert set(waiting) <= set(listed), "both pending items are still in the inbox"
    stack.wait_status(busy, "waiting", timeout=30)  # recovered from its checkpoint, paused at review
    item = wait_for(lambda: next((i for i in reviewer.items() if i["session_id"] == busy), None), 10, "busy listed")
    for pk in [listed[sid]["id"] for sid in waiting] + [item["id"]]:
        assert reviewer.decide(pk, "approve").status_code == 302
    for sid in [*waiting, busy]:
        stack.wait_status(sid, "completed")
        _completed_once(stack, sid)
    for sid in waiting:  # resumed from the checkpoint: nothing before the interrupt ran again
        assert stack.execution_counts(sid) == {"intake": 1, "work": 1, "review": 1, "finish": 1}
    assert stack.execution_counts(busy) == {"intake": 1, "work": 2, "review": 1, "finish": 1}

    auditor = Reviewer(stack, "auditor").login()
    page = auditor.http.get(f"/admin/workflow_sessions/workflowsession/{busy}/change/")
    assert page.status_code == 200
    for node in NODES:
        assert f"probe@1/{node}@1" in page.text, f"the admin's trail lacks {node}"
