"""50 reviewers (threads, real HTTPS through nginx, real logins and CSRF) race over 1,000 interrupts.

1,000 probe sessions are started through the webhook door and run to their review interrupt by the
workers. Then 50 reviewers, each logged in through the login form, repeatedly read their inbox
(``items.json``) and approve a few items picked at random from it, so most items are clicked by
several reviewers at once. Every interrupt must be decided exactly once: exactly one 302 per item
(the others 409), one stored answer, one function response, one resume (``finish`` runs once per
session), and the inbox ends empty for everyone. ``REVIEWCONSOLE_RACE_INTERRUPTS`` shrinks it
for a quick local run.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.scaleout.clients import Reviewer
from tests.scaleout.stack_parts import wait_for

pytestmark = pytest.mark.scaleout

REVIEWERS = 50
INTERRUPTS = int(os.environ.get("REVIEWCONSOLE_RACE_INTERRUPTS", "1000"))
DEADLINE = 300  # seconds for the whole race


def _start_all(stack, count: int) -> list[str]:
    def send(chunk: range) -> list[str]:
        with stack.client() as client:
            return [stack.start_probe(client, label=f"race-{n}") for n in chunk]

    chunks = [range(n, count, 8) for n in range(8)]
    with ThreadPoolExecutor(8) as pool:
        return [sid for ids in pool.map(send, chunks) for sid in ids]


def test_50_reviewers_race_over_1000_interrupts(healthy):
    stack = healthy
    names = stack.create_reviewers(REVIEWERS)
    started = time.monotonic()
    sids = _start_all(stack, INTERRUPTS)
    wait_for(
        lambda: (
            stack.sql("SELECT count(*) AS n FROM inbox_item WHERE status = 'pending' AND session_id = ANY(%s)", sids)[
                0
            ]["n"]
            == INTERRUPTS
        ),
        180,
        f"{INTERRUPTS} interrupts pending",
        interval=0.5,
    )
    created = time.monotonic() - started
    with ThreadPoolExecutor(10) as pool:
        reviewers = list(pool.map(lambda name: Reviewer(stack, name).login(), names))

    won: dict[int, list[str]] = defaultdict(list)
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + DEADLINE

    def review(reviewer: Reviewer) -> None:
        rng = random.Random(reviewer.username)
        while time.monotonic() < deadline:
            items = reviewer.items()
            if not items:
                return
            for item in rng.sample(items, min(3, len(items))):
                response = reviewer.decide(item["id"], "approve")
                with lock:
                    statuses[response.status_code] += 1
                    if response.status_code == 302:
                        won[item["id"]].append(reviewer.username)

    race_started = time.monotonic()
    with ThreadPoolExecutor(REVIEWERS) as pool:
        list(pool.map(review, reviewers))
    raced = time.monotonic() - race_started
    print(
        f"\n{INTERRUPTS} interrupts created in {created:.1f} s; {REVIEWERS} reviewers decided them in {raced:.1f} s;"
        f" answers {dict(statuses)}"
    )

    ours = {r["id"] for r in stack.sql("SELECT id FROM inbox_item WHERE session_id = ANY(%s)", sids)}
    won = {pk: who for pk, who in won.items() if pk in ours}  # items left by earlier tests were decided too
    assert set(statuses) <= {302, 409}, statuses
    assert len(won) == INTERRUPTS and all(len(w) == 1 for w in won.values()), "an item was not decided exactly once"
    wait_for(
        lambda: stack.count_status(sids, "completed") == INTERRUPTS,
        120,
        "every session completed",
        interval=0.5,
    )
    rows = stack.sql("SELECT id, status, decided_by_label FROM inbox_item WHERE session_id = ANY(%s)", sids)
    assert len(rows) == INTERRUPTS
    assert all(r["status"] == "resolved" and [r["decided_by_label"]] == won[r["id"]] for r in rows)
    per_interrupt = stack.sql(
        "SELECT session_id, interrupt_id, count(*) AS n, count(applied_at) AS applied FROM workflow_sessions_answer"
        " WHERE session_id = ANY(%s) GROUP BY session_id, interrupt_id",
        sids,
    )
    assert len(per_interrupt) == INTERRUPTS and all(r["n"] == 1 == r["applied"] for r in per_interrupt)
    finishes = stack.sql(
        "SELECT session_id, count(*) AS n FROM workflow_sessions_event WHERE node_path = 'probe@1/finish@1'"
        " AND session_id = ANY(%s) GROUP BY session_id",
        sids,
    )
    assert len(finishes) == INTERRUPTS and all(r["n"] == 1 for r in finishes)
    executions = Counter(line.split()[0] for line in stack.exec_log.read_text().splitlines() if " finish " in line)
    assert all(executions[sid] == 1 for sid in sids), "one resume per decision"
    assert all(not r.items() for r in reviewers[:5]), "the inbox ends empty"
    for reviewer in reviewers:
        reviewer.close()
