"""PostgreSQL restarted, then Redis restarted, while sessions run and decisions arrive.

For about 16 seconds a sender starts probe sessions through the webhook door and three reviewers
decide whatever their inbox shows, all through nginx. PostgreSQL is restarted after 3 s (every
connection drops, new ones are refused for a moment) and Redis after 9 s. Clients act as real
ones do: a refused request is retried after its ``Retry-After`` with the same ``webhook-id`` or
for the same item. Then the reviewers drain the inbox.

Observed: no 500 and no refusal without ``Retry-After`` and a short message; each accepted
webhook started one session; each decision answered 302 is applied exactly once (the interrupt
resolved by that reviewer, one stored answer, applied, one function response event), and a
decision refused with 503 whose commit had in fact landed is reported by the retry as already
decided by the same reviewer, never applied twice; every session completes with one output of
its last node (a run the restart stopped halfway runs that node again, flagged ``effectMayHaveRun``
as the engine does after a dead run); no event is stored twice. After the Redis restart the live
inbox works again: a socket either keeps receiving or is closed (the page reconnects), and a new
socket receives new items.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict

import httpx
import pytest

from engine import EFFECT_MAY_HAVE_RUN
from tests.scaleout.clients import InboxSocket, Reviewer
from tests.scaleout.stack_parts import wait_for

pytestmark = pytest.mark.scaleout

RUN_SECONDS = 16
PG_AT, REDIS_AT = 3, 9


class Log:
    """Every answer the clients got, by kind; refusals must be clean."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: Counter[str] = Counter()
        self.unclean: list[str] = []
        self.accepted_hooks: dict[str, str] = {}  # webhook-id → session id
        self.decided: dict[int, str] = {}  # interrupt pk → reviewer whose decide answered 302
        self.lost_answers: dict[int, str] = {}  # pk → reviewer refused with 503, to check on retry

    def note(self, what: str, response: httpx.Response | None, error: Exception | None = None) -> None:
        with self.lock:
            if response is None:
                self.statuses[f"{what}:{type(error).__name__}"] += 1
                return
            self.statuses[f"{what}:{response.status_code}"] += 1
            status, text = response.status_code, response.text
            if status >= 500 and status != 503:
                self.unclean.append(f"{what} {status}: {text[:300]}")
            refused = status == 503 or (status == 409 and "busy" in text[:300])
            if refused and ("Retry-After" not in response.headers or len(text) > 600 or "Traceback" in text):
                self.unclean.append(f"{what} {status} refusal not clean: {text[:300]}")


def _sender(stack, log: Log, stop: threading.Event) -> None:
    try:
        _send(stack, log, stop)
    except Exception as exc:
        with log.lock:
            log.unclean.append(f"sender: {exc!r}")


def _send(stack, log: Log, stop: threading.Event) -> None:
    with stack.client(timeout=15) as client:
        n = 0
        while not stop.is_set():
            n += 1
            hook_id = f"msg_restart_{n}_{random.random()}"
            while not stop.is_set():  # the same webhook-id until it is accepted, as senders retry
                try:
                    response = stack.send_webhook(client, "probe", {"label": f"r{n}"}, webhook_id=hook_id)
                except httpx.HTTPError as exc:
                    log.note("webhook", None, exc)
                    time.sleep(0.2)
                    continue
                log.note("webhook", response)
                if response.status_code == 202:
                    with log.lock:
                        log.accepted_hooks[hook_id] = response.json()["session_id"]
                    break
                time.sleep(min(float(response.headers.get("Retry-After", "1")), 1.0))
            time.sleep(0.15)


def _review(reviewer: Reviewer, log: Log, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            _review_once(reviewer, log)
        except Exception as exc:  # recorded, and the test fails on it; the reviewer goes on meanwhile
            with log.lock:
                log.unclean.append(f"reviewer {reviewer.username}: {exc!r}")
            time.sleep(0.3)


def _review_once(reviewer: Reviewer, log: Log) -> None:
    try:
        items = reviewer.items()
    except httpx.HTTPStatusError as exc:
        log.note("items", exc.response)
        time.sleep(0.3)
        return
    except httpx.HTTPError as exc:
        log.note("items", None, exc)
        time.sleep(0.3)
        return
    random.shuffle(items)
    for item in items[:5]:
        try:
            response = reviewer.decide(item["id"], "approve")
        except httpx.HTTPError as exc:
            log.note("decide", None, exc)
            continue
        log.note("decide", response)
        with log.lock:
            if response.status_code == 302:
                if item["id"] in log.decided:
                    log.unclean.append(f"item {item['id']}: a second decision was accepted")
                log.decided[item["id"]] = reviewer.username
            elif response.status_code == 503:
                log.lost_answers.setdefault(item["id"], reviewer.username)
    time.sleep(0.05)


def test_decisions_and_webhooks_survive_postgres_and_redis_restarts(healthy):
    stack = healthy
    names = stack.create_reviewers(3)
    reviewers = [Reviewer(stack, name).login() for name in names]
    watcher = Reviewer(stack, "manager").login()
    old_socket = InboxSocket(stack, watcher)
    log, stop_sending, stop_reviewing = Log(), threading.Event(), threading.Event()
    threads = [threading.Thread(target=_sender, args=(stack, log, stop_sending))]
    threads += [threading.Thread(target=_review, args=(r, log, stop_reviewing)) for r in reviewers]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    try:
        time.sleep(PG_AT)  # the load runs meanwhile; the restarts happen at fixed points
        pg_away = stack.restart_postgres()
        time.sleep(max(0.0, REDIS_AT - (time.monotonic() - started)))
        redis_away = stack.restart_redis()
        time.sleep(max(0.0, RUN_SECONDS - (time.monotonic() - started)))
    finally:
        stop_sending.set()
        threads[0].join(30)
    sessions = set(log.accepted_hooks.values())
    try:
        wait_for(
            lambda: all(stack.session(sid)["status"] == "completed" for sid in sessions), 90, "every session completed"
        )
    except TimeoutError:
        stuck = stack.sql(
            "SELECT id, status, lease_owner, lease_expires, updated_at, error FROM workflow_sessions_workflowsession"
            " WHERE id = ANY(%s) AND status <> 'completed'",
            list(sessions),
        )
        tasks = stack.sql(
            "SELECT status, args_kwargs, worker_ids FROM django_tasks_database_dbtaskresult"
            " WHERE status <> 'SUCCESSFUL'"
        )
        raise AssertionError(
            f"unclean: {log.unclean}\nnot completed: {stuck}\ntasks: {tasks}\nnow: {stack.sql('SELECT now()')}"
        ) from None
    finally:
        stop_reviewing.set()
        for thread in threads[1:]:
            thread.join(30)
    print(f"\nPostgreSQL away {pg_away:.1f} s, Redis away {redis_away:.1f} s; answers: {dict(log.statuses)}")

    assert not log.unclean, log.unclean
    assert log.statuses["webhook:202"] == len(log.accepted_hooks) > 10
    # The restart happened under load. Requests that needed the database meanwhile either waited
    # for the pool to reconnect (and succeeded) or were refused with a 503: both are fine, a 500 is
    # not (``log.unclean``), and neither loses or repeats anything (checked below).
    assert pg_away > 0.5, f"PostgreSQL was not away long enough to test anything ({pg_away:.1f} s)"
    # Each accepted webhook-id started one session, and no id two.
    rows = stack.sql(
        "SELECT webhook_id, session_id FROM hooks_webhookdelivery WHERE webhook_id = ANY(%s)", list(log.accepted_hooks)
    )
    assert {r["webhook_id"]: r["session_id"] for r in rows} == log.accepted_hooks
    assert len(
        stack.sql(
            "SELECT id FROM workflow_sessions_workflowsession WHERE workflow = 'probe' AND id = ANY(%s)", list(sessions)
        )
    ) == len(sessions)

    interrupts = stack.sql(
        "SELECT i.id, i.interrupt_id, i.session_id, i.status, i.decided_by_label FROM inbox_item i"
        " WHERE i.session_id = ANY(%s)",
        list(sessions),
    )
    assert len(interrupts) == len(sessions) and all(i["status"] == "resolved" for i in interrupts)
    by_pk = {i["id"]: i for i in interrupts}
    for pk, who in log.decided.items():  # accepted with a 2xx: applied, by that reviewer
        if pk in by_pk:  # (items left waiting by earlier tests are decided too)
            assert by_pk[pk]["decided_by_label"] == who
    for pk in log.lost_answers:
        if pk in by_pk and pk not in log.decided:  # refused, yet perhaps committed: then it is that reviewer's, once
            assert by_pk[pk]["decided_by_label"] in names
    stored = stack.sql(
        "SELECT session_id, interrupt_id, applied_at FROM workflow_sessions_answer WHERE session_id = ANY(%s)",
        list(sessions),
    )
    assert Counter((a["session_id"], a["interrupt_id"]) for a in stored) == Counter(
        (i["session_id"], i["interrupt_id"]) for i in interrupts
    ), "an interrupt has not exactly one stored answer"
    assert all(a["applied_at"] is not None for a in stored)
    responses: dict[str, int] = defaultdict(int)
    for sid in sessions:
        events = stack.assert_events_whole(sid)
        for event in events:
            for part in (event["data"].get("content") or {}).get("parts", []):
                if part.get("functionResponse"):
                    responses[sid] += 1
        finish = [e for e in events if e["node_path"] == "probe@1/finish@1"]
        # A run the restart stopped while ``finish`` ran (its lease ran out meanwhile) leaves the
        # node to run again, flagged: the marker event is stored with the second run's output.
        reruns = [e for e in finish if (e["data"].get("customMetadata") or {}).get(EFFECT_MAY_HAVE_RUN)]
        outputs = [e for e in finish if e not in reruns]
        assert len(outputs) == 1, f"session {sid} finished {len(outputs)} times"
        assert all(r["seq"] < outputs[0]["seq"] for r in reruns), f"session {sid}: a rerun's flag after its output"
    assert all(responses[sid] == 1 for sid in sessions), "one function response per decision"

    # Live updates after the Redis restart: the old socket was closed (the page reconnects) or
    # still receives; a new socket receives new items.
    new_socket = InboxSocket(stack, watcher)
    sid = stack.start_probe(label="after-redis")

    def announced(socket: InboxSocket) -> bool:
        return any((m.get("item") or {}).get("session_id") == sid for _, m in socket.messages)

    wait_for(lambda: announced(new_socket), 20, "a new socket hears of a new item")
    wait_for(lambda: announced(old_socket) or old_socket.closed.is_set(), 20, "the old socket hears or is closed")
    old_socket.close()
    new_socket.close()
