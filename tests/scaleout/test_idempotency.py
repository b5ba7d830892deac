"""Redeliveries and retries across processes start nothing twice.

Copies of one request are sent at the same moment to *both* Daphne processes directly (no
nginx in between, so each process surely gets some): a webhook with one ``webhook-id``, an API
start and an API resume with one ``Idempotency-Key``. Each time exactly one session is started
(or one answer stored), and every copy gets the same answer.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter

import httpx
import pytest

from tests.scaleout.stack_parts import API_TOKEN, sign

pytestmark = pytest.mark.scaleout

COPIES = 12


def _at_once(stack, send) -> list[httpx.Response]:
    """``send(client)`` on COPIES threads released together, alternating between the processes."""
    barrier = threading.Barrier(COPIES)
    answers: list[httpx.Response | Exception] = [None] * COPIES  # type: ignore[list-item]

    def run(n: int) -> None:
        web = stack.webs[n % len(stack.webs)]
        # Straight to the process; it trusts X-Forwarded-Proto as it would from nginx.
        headers = {"X-Forwarded-Proto": "https", "Host": "127.0.0.1"}
        with httpx.Client(base_url=f"http://127.0.0.1:{web.port}", headers=headers, timeout=30) as client:
            barrier.wait(timeout=30)
            try:
                answers[n] = send(client)
            except Exception as exc:
                answers[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(COPIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(isinstance(a, httpx.Response) for a in answers), answers
    return answers  # type: ignore[return-value]


def test_one_webhook_redelivered_to_every_process_at_once_starts_one_session(healthy):
    stack = healthy
    body = json.dumps({"label": "redelivered"})
    headers = {"content-type": "application/json", **sign(body, f"msg_{uuid.uuid4().hex}", "probe")}
    answers = _at_once(stack, lambda c: c.post("/hooks/probe/", content=body, headers=headers))
    assert Counter(a.status_code for a in answers) == {202: COPIES}
    sessions = {a.json()["session_id"] for a in answers}
    assert len(sessions) == 1
    (sid,) = sessions
    rows = stack.sql("SELECT count(*) AS n FROM hooks_webhookdelivery WHERE webhook_id = %s", headers["webhook-id"])
    assert rows[0]["n"] == 1
    label = stack.sql("SELECT count(*) AS n FROM workflow_sessions_workflowsession WHERE title = 'redelivered'")
    assert label[0]["n"] == 1
    stack.wait_status(sid, "waiting")
    assert stack.execution_counts(sid) == {"intake": 1, "work": 1, "review": 1}


def _api(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {API_TOKEN}", "Idempotency-Key": key, "content-type": "application/json"}


def test_api_retries_with_one_idempotency_key_start_and_answer_once(healthy):
    stack = healthy
    start = json.dumps({"workflow": "probe", "input": {"label": "api-retried"}})
    key = f"start-{uuid.uuid4().hex}"
    answers = _at_once(stack, lambda c: c.post("/api/v1/sessions", content=start, headers=_api(key)))
    statuses = Counter(a.status_code for a in answers)
    assert set(statuses) <= {202, 409}, [a.text for a in answers]
    assert statuses[202] >= 1 and all(
        a.json()["error"]["code"] == "idempotency_in_flight" for a in answers if a.status_code == 409
    )
    sessions = {a.json()["session_id"] for a in answers if a.status_code == 202}
    assert len(sessions) == 1
    (sid,) = sessions
    assert (
        stack.sql("SELECT count(*) AS n FROM workflow_sessions_workflowsession WHERE title = 'api-retried'")[0]["n"]
        == 1
    )
    stack.wait_status(sid, "waiting")

    resume = json.dumps({"payload": {"result": "approve"}})
    key = f"resume-{uuid.uuid4().hex}"
    answers = _at_once(stack, lambda c: c.post(f"/api/v1/sessions/{sid}/resume", content=resume, headers=_api(key)))
    statuses = Counter(a.status_code for a in answers)
    assert statuses[202] >= 1 and set(statuses) <= {202, 409}, [a.text for a in answers]
    for answer in answers:
        if answer.status_code == 409:  # a copy still in flight, or the first answer named: never a second one
            assert answer.json()["error"]["code"] in ("idempotency_in_flight", "interrupt_decided")
    stack.wait_status(sid, "completed")
    stored = stack.sql("SELECT count(*) AS n FROM workflow_sessions_answer WHERE session_id = %s", sid)
    assert stored[0]["n"] == 1
    assert stack.execution_counts(sid) == {"intake": 1, "work": 1, "review": 1, "finish": 1}
