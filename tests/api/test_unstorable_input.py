"""API bodies holding what no database column can (NUL, unpaired surrogates, non-finite numbers):
400 ``invalid_request`` naming the field, before anything is stored."""

from __future__ import annotations

import pytest

from reviewconsole.api.models import IdempotencyRecord
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, WorkflowSession
from tests.api.conftest import REFUND, auth, post


def _raw(client, path, text, token, key):
    return client.post(path, text, content_type="application/json", headers=auth(token, key))


def _refused(response, where):
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert any(where in e["message"] for e in error["errors"]), error
    return error


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"workflow": "email-review", "input": {"complaint": "a\\u0000b"}}', "input.complaint contains a NUL"),
        ('{"workflow": "email-review", "input": {"complaint": "x", "k\\u0000": 1}}', "input has a key that"),
        ('{"workflow": "refund-approval", "input": {"order_id": "A", "amount": 1e400, "reason": "r"}}', "input.amount"),
        ('{"workflow": "refund-approval", "input": {"order_id": "A", "amount": NaN, "reason": "r"}}', "input.amount"),
    ],
)
def test_a_start_with_an_unstorable_value_is_refused(client, token, text, where):
    _refused(_raw(client, "/api/v1/sessions", text, token, "start-nul"), where)
    assert WorkflowSession.objects.count() == 0
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"payload": {"status": "approved", "note": "a\\u0000b"}}', "payload.note contains a NUL"),
        ('{"payload": {"status": "approved", "result": 1e400}}', "payload.result is not a finite number"),
        ('{"interrupt_id": "x\\u0000", "payload": {"status": "approved"}}', "interrupt_id contains a NUL"),
    ],
)
def test_a_resume_with_an_unstorable_value_is_refused(client, token, on_commit, text, where):
    with on_commit():
        started = post(client, "/api/v1/sessions", {"workflow": "refund-approval", "input": REFUND}, token)
    session_id = started.json()["session_id"]
    _refused(_raw(client, f"/api/v1/sessions/{session_id}/resume", text, token, "resume-nul"), where)
    assert Answer.objects.count() == 0
    assert Item.objects.get(session_id=session_id).status == "pending"


def test_a_cancel_reason_with_a_nul_is_refused(client, token, on_commit):
    with on_commit():
        started = post(client, "/api/v1/sessions", {"workflow": "refund-approval", "input": REFUND}, token)
    session_id = started.json()["session_id"]
    response = _raw(client, f"/api/v1/sessions/{session_id}/cancel", '{"reason": "a\\u0000b"}', token, None)
    _refused(response, "reason contains a NUL")
    assert WorkflowSession.objects.get(pk=session_id).status == "waiting"
