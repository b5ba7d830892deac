"""Property-based tests of API input: any JSON as a start input or a resume payload gets a clear 2xx or
4xx, and a refusal stores nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event, WorkflowSession
from reviewconsole.workflow_sessions.models import Interrupt as SessionInterrupt
from tests.api.conftest import REFUND, post

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3),
    max_leaves=12,
)
HYPO = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@HYPO
@given(data=JSON, workflow=st.sampled_from(["email-review", "refund-approval", "vip-discount", "nope", ""]))
def test_any_start_input_is_accepted_or_refused_cleanly(client, token, data, workflow):
    before = WorkflowSession.objects.count()
    response = post(client, "/api/v1/sessions", {"workflow": workflow, "input": data}, token)
    assert response.status_code in (202, 400, 403, 404), response.content
    assert "error" in response.json() or response.status_code == 202
    assert WorkflowSession.objects.count() == before + (1 if response.status_code == 202 else 0)


@pytest.fixture
def confirmation(client, token, on_commit):
    """A refund under the limit: it waits on the confirmation of ``submit_refund`` ({"confirmed": bool})."""
    with on_commit():
        response = post(
            client, "/api/v1/sessions", {"workflow": "refund-approval", "input": {**REFUND, "amount": 20.0}}, token
        )
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    return session, Item.objects.get(session=session, status="pending")


@HYPO
@given(payload=JSON, name_it=st.booleans())
def test_any_resume_payload_is_stored_once_or_refused_with_nothing_stored(
    client, token, confirmation, payload, name_it
):
    session, interrupt = confirmation
    reset = {"status": "pending", "response": None, "decided_by_label": "", "decided_at": None}
    Item.objects.filter(pk=interrupt.pk).update(**reset)
    SessionInterrupt.objects.filter(item=interrupt).update(**reset)  # the engine's own row
    Answer.objects.filter(session=session).delete()
    events = Event.objects.filter(session=session).count()
    body = {"payload": payload, **({"interrupt_id": interrupt.interrupt_id} if name_it else {})}
    response = post(client, f"/api/v1/sessions/{session.id}/resume", body, token)
    assert response.status_code in (202, 400), response.content
    if response.status_code == 202:
        assert Answer.objects.filter(session=session).count() == 1
        assert Event.objects.filter(session=session).count() == events + 1
    else:
        assert response.json()["error"]["code"] in ("answer_invalid", "invalid_request", "args_digest_required")
        assert Answer.objects.filter(session=session).count() == 0
        assert Event.objects.filter(session=session).count() == events
        assert Item.objects.get(pk=interrupt.pk).status == "pending"
