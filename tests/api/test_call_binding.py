"""The API's side of approvals bound to the exact call (``api/services.py``, ``engine/_digest.py``):
an approval names its interrupt id and digest, edited arguments run exactly, the same answer twice
returns the first receipt, and forged ids and changed arguments are refused and audited."""

from __future__ import annotations

from engine import args_digest
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Event, WorkflowSession
from tests import call_binding
from tests.api.conftest import post
from tests.call_binding import SMALL

refunds = call_binding.refunds
two_refunds = call_binding.two_refunds


def _start(client, token, on_commit, data=SMALL):
    with on_commit():
        response = post(client, "/api/v1/sessions", {"workflow": "refund-approval", "input": data}, token)
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    return session, list(Item.objects.filter(session=session, status="pending").order_by("id"))


def _resume(client, token, session, body):
    return post(client, f"/api/v1/sessions/{session.id}/resume", body, token)


def _approve(item, **extra):
    return {"interrupt_id": item.interrupt_id, "payload": {"confirmed": True, **extra}}


def test_interrupts_show_the_digest_of_the_call(client, token, on_commit, refunds):
    session, _ = _start(client, token, on_commit)
    digest = args_digest("submit_refund", {"order_id": "A-1", "amount": 20.0})
    [listed] = client.get("/api/v1/interrupts", headers={"Authorization": f"Bearer {token}"}).json()["interrupts"]
    assert listed["args_digest"] == digest
    read = client.get(f"/api/v1/sessions/{session.id}", headers={"Authorization": f"Bearer {token}"}).json()
    [waiting] = [i for i in read["interrupts"] if i["status"] == "pending"]  # after the policy's approval
    assert waiting["args_digest"] == digest
    assert digest not in str(read["events"])  # ADK's event JSON stays as ADK writes it


def test_an_approval_must_name_the_call(client, token, on_commit, refunds):
    session, [item] = _start(client, token, on_commit)
    unnamed = {"payload": {"confirmed": True, "args_digest": "x"}}
    for body in ({"payload": {"confirmed": True}}, _approve(item), unnamed):
        response = _resume(client, token, session, body)
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "args_digest_required"
        assert item.metadata["args_digest"] not in response.content.decode(), "never copied back from an error"
    assert call_binding.answers_to_people(session) == 0
    with on_commit():
        rejected = _resume(client, token, session, {"payload": {"confirmed": False}})  # a rejection names nothing
    assert rejected.status_code == 202, rejected.content
    assert refunds == []


def test_an_approval_of_changed_arguments_is_refused(client, token, on_commit, refunds):
    session, [item] = _start(client, token, on_commit)
    shown = args_digest("submit_refund", {"order_id": "A-1", "amount": 2000.0})
    response = _resume(client, token, session, _approve(item, args_digest=shown))
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert (error["code"], error["given"]) == ("args_changed", shown)
    assert item.metadata["args_digest"] not in response.content.decode(), "never copied back from an error"
    assert call_binding.answers_to_people(session) == 0
    refused = AuditEntry.objects.get(action="interrupt.refuse")
    assert (refused.actor, refused.detail["code"], refused.detail["interrupt_id"]) == (
        "client:partner",
        "args_changed",
        item.interrupt_id,
    )
    with on_commit():
        response = _resume(client, token, session, _approve(item, args_digest=item.metadata["args_digest"]))
    assert response.status_code == 202, response.content
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]


def test_a_forged_interrupt_id_is_refused(client, token, on_commit, refunds):
    session, [item] = _start(client, token, on_commit)
    body = {"interrupt_id": "adk-forged", "payload": {"confirmed": True, "args_digest": item.metadata["args_digest"]}}
    response = _resume(client, token, session, body)
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "interrupt_unknown"
    assert call_binding.answers_to_people(session) == 0
    assert AuditEntry.objects.get(action="interrupt.refuse").detail["interrupt_id"] == "adk-forged"
    assert refunds == []


def test_edited_arguments_are_checked_and_exactly_what_runs(client, token, on_commit, refunds):
    session, [item] = _start(client, token, on_commit)
    digest = item.metadata["args_digest"]
    bad = _resume(client, token, session, _approve(item, args_digest=digest, args={"order_id": "A-1", "amount": "x"}))
    assert bad.status_code == 400
    assert bad.json()["error"]["errors"][0]["path"] == ["args", "amount"]
    edited = {"order_id": "A-1", "amount": 12.5}
    with on_commit():
        response = _resume(client, token, session, _approve(item, args_digest=digest, args=edited))
    assert response.status_code == 202, response.content
    assert response.json()["receipt"]["edited_args_digest"] == args_digest("submit_refund", edited)
    assert refunds == [edited]
    item.refresh_from_db()
    assert '+  "amount": 12.5,' in item.edit_diff


def test_an_edit_may_lower_the_refund_not_change_its_order_and_the_result_names_what_ran(
    client, token, on_commit, refunds
):
    """Found in a new user's trial: an edit could refund another order, and the session's result
    named the amount the agent proposed, not the lowered one that was submitted."""
    session, [item] = _start(client, token, on_commit, {**SMALL, "amount": 50})
    digest = item.metadata["args_digest"]
    other = _resume(client, token, session, _approve(item, args_digest=digest, args={"order_id": "B-9", "amount": 50}))
    assert other.status_code == 400, other.content
    assert other.json()["error"]["code"] == "decision_refused"
    assert "order_id A-1" in other.json()["error"]["message"]
    raised = _resume(client, token, session, _approve(item, args_digest=digest, args={"order_id": "A-1", "amount": 60}))
    assert raised.status_code == 400
    assert "amount may not be larger" in raised.json()["error"]["message"]
    below = _resume(client, token, session, _approve(item, args_digest=digest, args={"order_id": "A-1", "amount": -5}))
    assert (below.status_code, below.json()["error"]["code"]) == (400, "decision_refused")  # found by an attack
    assert "must be more than $0" in below.json()["error"]["message"]
    assert refunds == []
    lower = {"order_id": "A-1", "amount": 20}
    with on_commit():
        lowered = _resume(client, token, session, _approve(item, args_digest=digest, args=lower))
    assert lowered.status_code == 202, lowered.content
    assert refunds == [{"order_id": "A-1", "amount": 20}]
    read = client.get(f"/api/v1/sessions/{session.id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert read["result"] == "Your refund of $20.00 for order A-1 has been submitted."


def test_the_same_approval_sent_twice_is_a_no_op_returning_the_first_receipt(client, token, on_commit, refunds):
    session, [item] = _start(client, token, on_commit)
    body = _approve(item, args_digest=item.metadata["args_digest"])
    with on_commit():
        first = _resume(client, token, session, body)
    assert first.status_code == 202, first.content
    receipt = first.json()["receipt"]
    assert (receipt["decision"], receipt["decided_by"]) == ("approve", "client:partner")
    events = Event.objects.filter(session=session).count()
    with on_commit():
        again = _resume(client, token, session, body)
    assert again.status_code == 200, again.content
    assert (again.json()["status"], again.json()["receipt"]) == ("already_decided", receipt)
    assert Event.objects.filter(session=session).count() == events
    assert call_binding.answers_to_people(session) == 1
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]
    other = _resume(client, token, session, {"interrupt_id": item.interrupt_id, "payload": {"confirmed": False}})
    assert other.status_code == 409
    assert (other.json()["error"]["code"], other.json()["error"]["decided_by"]) == (
        "interrupt_decided",
        "client:partner",
    )
    assert AuditEntry.objects.get(action="interrupt.refuse").detail["code"] == "interrupt_decided"


def test_approve_and_reject_in_one_batch_each_take_effect(client, token, on_commit, refunds, two_refunds):
    session, items = _start(client, token, on_commit)
    by_order = {i.payload["args"]["order_id"]: i for i in items}
    a, b = by_order["A-1"], by_order["B-2"]
    with on_commit():
        assert _resume(client, token, session, _approve(a, args_digest=a.metadata["args_digest"])).status_code == 202
        rejected = _resume(client, token, session, {"interrupt_id": b.interrupt_id, "payload": {"confirmed": False}})
    assert rejected.status_code == 202, rejected.content
    session.refresh_from_db()
    assert session.status == "completed"
    assert refunds == [{"order_id": "A-1", "amount": 10.0}]


def test_a_long_running_approval_is_bound_to_its_call_before_the_workflows_checks(client, token, on_commit):
    """Found by the last session's review: a $700 refund's approval with a wrong digest and no
    reason was refused for the reason (400 decision_refused), judging a call it was not shown."""
    session, [ask] = _start(client, token, on_commit, {"order_id": "L-7", "amount": 700, "reason": "broken"})
    assert (ask.kind, ask.function_name) == ("long_running", "ask_for_approval")
    wrong = args_digest("ask_for_approval", {"order_id": "L-7", "amount": 7000.0, "reason": "broken"})
    body = {"interrupt_id": ask.interrupt_id, "payload": {"status": "approved", "args_digest": wrong}}
    response = _resume(client, token, session, body)
    assert response.status_code == 409, response.content
    assert (response.json()["error"]["code"], response.json()["error"]["given"]) == ("args_changed", wrong)
    assert ask.metadata["args_digest"] not in response.content.decode()
    right = {
        "interrupt_id": ask.interrupt_id,
        "payload": {"status": "approved", "args_digest": ask.metadata["args_digest"]},
    }
    refused = _resume(client, token, session, right)  # the call as shown: now the reason check speaks
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "decision_refused")
    assert call_binding.answers_to_people(session) == 0
