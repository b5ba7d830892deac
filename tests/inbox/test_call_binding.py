"""The inbox's side of approvals bound to the exact call (``inbox/items/decisions.py``,
``receipts.py``, ``engine/_digest.py``): the page posts the interrupt id and the digest it showed,
edited arguments run exactly, the same decision twice is one decision, refusals are audited."""

from __future__ import annotations

import html
import json

from asgiref.sync import async_to_sync

from engine import args_digest
from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.timeline import timeline
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Checkpoint, Event, WorkflowSession
from reviewconsole.workflow_sessions.runners import runner_for
from tests import call_binding
from tests.call_binding import SMALL

refunds = call_binding.refunds
two_refunds = call_binding.two_refunds

JSON = {"Accept": "application/json"}


def _decide(client, item, **fields):
    return client.post(f"/inbox/items/{item.pk}/decide/", fields, headers=JSON)


def _confirmation(start_session, data=SMALL):
    session, [item] = start_session("refund-approval", data)
    assert (item.kind, item.function_name) == ("confirmation", "adk_request_confirmation")
    return session, item


def test_the_page_shows_the_call_and_posts_its_id_and_digest(client, personas, start_session):
    _, item = _confirmation(start_session, {**SMALL, "order_id": "<script>x</script>"})
    digest = args_digest("submit_refund", {"order_id": "<script>x</script>", "amount": 20.0})
    assert item.metadata["args_digest"] == digest
    client.force_login(personas.other_reviewer)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert f'name="interrupt_id" value="{item.interrupt_id}"' in page
    assert f'name="args_digest" value="{digest}"' in page
    assert "<script>x</script>" not in page
    assert html.escape('"order_id": "<script>x</script>"', quote=True) in page  # the edit box, escaped


def test_an_approval_of_changed_arguments_is_refused(client, personas, start_session, refunds, on_commit):
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    shown = args_digest("submit_refund", {"order_id": "A-1", "amount": 2000.0})  # not the call waiting
    response = _decide(client, item, action="approve", interrupt_id=item.interrupt_id, args_digest=shown)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "args_changed"
    assert (call_binding.answers_to_people(session), refunds) == (0, [])
    assert Item.objects.get(pk=item.pk).status == "pending"
    refused = AuditEntry.objects.get(action="interrupt.refuse")
    assert (refused.detail["code"], refused.detail["given"]) == ("args_changed", shown)
    assert refused.actor == "user:p-other"
    with on_commit():
        digest = item.metadata["args_digest"]
        response = _decide(client, item, action="approve", interrupt_id=item.interrupt_id, args_digest=digest)
    assert response.status_code == 200, response.content
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]


def test_a_forged_interrupt_id_is_refused(client, personas, start_session, refunds):
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    response = _decide(
        client, item, action="approve", interrupt_id="adk-forged", args_digest=item.metadata["args_digest"]
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "interrupt_unknown"
    assert call_binding.answers_to_people(session) == 0
    assert Item.objects.get(pk=item.pk).status == "pending"
    assert AuditEntry.objects.get(action="interrupt.refuse").detail["code"] == "interrupt_unknown"


def test_the_same_approval_sent_twice_is_a_no_op_returning_the_first_receipt(
    client, personas, start_session, refunds, on_commit
):
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    fields = {"action": "approve", "interrupt_id": item.interrupt_id, "args_digest": item.metadata["args_digest"]}
    with on_commit():
        first = _decide(client, item, **fields)
    assert first.status_code == 200, first.content
    receipt = first.json()["receipt"]
    assert (receipt["decision"], receipt["decided_by"], receipt["interrupt_id"]) == (
        "approve",
        "p-other",
        item.interrupt_id,
    )
    assert receipt["decided_at"]
    events = Event.objects.filter(session=session).count()
    with on_commit():
        again = _decide(client, item, **fields)
    assert again.status_code == 200, again.content
    assert again.json()["receipt"] == receipt
    assert call_binding.answers_to_people(session) == 1
    assert Event.objects.filter(session=session).count() == events  # no second resume
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]
    assert AuditEntry.objects.filter(action="interrupt.decide", actor="user:p-other").count() == 1
    other = _decide(client, item, action="reject", reason="changed my mind")
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "already_decided"
    assert "p-other" in other.json()["error"]["message"]
    assert AuditEntry.objects.get(action="interrupt.refuse").detail["code"] == "interrupt_decided"


def test_edited_arguments_are_checked_and_exactly_what_runs(client, personas, start_session, refunds, on_commit):
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    base = {"action": "approve", "interrupt_id": item.interrupt_id, "args_digest": item.metadata["args_digest"]}
    bad = _decide(client, item, **base, edit_args="1", args='{"order_id": "A-1", "amount": "lots"}')
    assert bad.status_code == 400
    assert bad.json()["error"]["errors"][0]["path"] == ["args", "amount"]
    assert _decide(client, item, **base, edit_args="1", args="[1]").status_code == 400
    assert call_binding.answers_to_people(session) == 0
    with on_commit():
        edited = _decide(client, item, **base, edit_args="1", args='{"order_id": "A-1", "amount": 15}')
    assert edited.status_code == 200, edited.content
    assert refunds == [{"order_id": "A-1", "amount": 15}]
    item.refresh_from_db()
    assert item.response["args"] == {"order_id": "A-1", "amount": 15}
    assert item.response["edited_args_digest"] == args_digest("submit_refund", {"order_id": "A-1", "amount": 15})
    assert '+  "amount": 15,' in item.edit_diff


def test_the_timeline_says_who_approved_what_and_when(client, personas, start_session, refunds, on_commit):
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    base = {"action": "approve", "interrupt_id": item.interrupt_id, "args_digest": item.metadata["args_digest"]}
    with on_commit():
        _decide(client, item, **base, edit_args="1", args='{"order_id": "A-1", "amount": 15}')
    item.refresh_from_db()
    [decision] = [d for row in timeline(session) for d in row.decisions if d.decided_by == "p-other"]
    assert (decision.decision, decision.decided_by, decision.decided_at) == ("approve", "p-other", item.decided_at)
    assert decision.call == 'submit_refund({"order_id": "A-1", "amount": 15})'
    assert decision.args_digest == item.response["edited_args_digest"]
    client.force_login(personas.admin)
    page = client.get(f"/admin/workflow_sessions/workflowsession/{session.pk}/change/").content.decode()
    assert f"by p-other at {item.decided_at:%Y-%m-%d %H:%M:%S} UTC" in page
    assert html.escape('submit_refund({"order_id": "A-1", "amount": 15})') in page


def test_approve_and_reject_in_one_batch_each_take_effect(
    client, personas, start_session, refunds, two_refunds, on_commit
):
    session, items = start_session("refund-approval", SMALL)
    by_order = {i.payload["args"]["order_id"]: i for i in items}
    assert sorted(by_order) == ["A-1", "B-2"]
    client.force_login(personas.other_reviewer)
    a, b = by_order["A-1"], by_order["B-2"]
    with on_commit():
        approved = _decide(
            client, a, action="approve", interrupt_id=a.interrupt_id, args_digest=a.metadata["args_digest"]
        )
    assert approved.status_code == 200, approved.content
    assert refunds == [{"order_id": "A-1", "amount": 10.0}]
    with on_commit():
        rejected = _decide(client, b, action="reject", reason="duplicate", interrupt_id=b.interrupt_id)
    assert rejected.status_code == 200, rejected.content
    session.refresh_from_db()
    assert session.status == "completed"
    assert refunds == [{"order_id": "A-1", "amount": 10.0}]  # the rejected one never ran
    responses = [
        p["functionResponse"]["response"]
        for e in Event.objects.filter(session=session, author="refund_agent").order_by("seq")
        for p in e.data.get("content", {}).get("parts", [])
        if "functionResponse" in p
    ]
    assert {"status": "submitted", "order_id": "A-1", "amount": 10.0} in responses
    assert {"error": "The refund was not submitted: a reviewer declined it."} in responses
    assert not Item.objects.filter(session=session, status="pending").exists()


def test_approved_arguments_cannot_drift_on_replay(personas, start_session, refunds, client):
    """The approval is stored for submit_refund(A-1, 20.0); before its run applies it, the stored
    checkpoint's call drifts to 2000 (a replay of an altered checkpoint): the tool never runs so."""
    session, item = _confirmation(start_session)
    client.force_login(personas.other_reviewer)
    digest = item.metadata["args_digest"]
    response = _decide(client, item, action="approve", interrupt_id=item.interrupt_id, args_digest=digest)
    assert response.status_code == 200  # stored; its run is queued on commit, which this test holds back
    session.refresh_from_db()
    text = json.dumps(session.checkpoint)
    assert '"amount": 20.0' in text
    drifted = json.loads(text.replace('"amount": 20.0', '"amount": 2000.0'))
    WorkflowSession.objects.filter(pk=session.pk).update(checkpoint=drifted)
    Checkpoint.objects.filter(session=session).update(data=drifted)
    async_to_sync(runner_for("refund-approval").run_pending)(session.id)
    session.refresh_from_db()
    assert refunds == []
    assert session.status == "completed"
    said = [e.data for e in Event.objects.filter(session=session, author="refund_agent")]
    assert any("not the ones that were approved" in json.dumps(d) for d in said)
