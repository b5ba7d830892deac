"""Edited arguments cannot change what the approval policies said (issue 15, found by this
session's attack): the rules were asked about the call as the model made it, so an approval whose
edited arguments get another verdict (four eyes, another rule) is refused, and under four eyes
arguments are never edited. A rule's condition that raises leaves the decision to people."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.policies.models import FirstApproval, PolicyRule
from reviewconsole.workflow_sessions.models import Answer
from reviewconsole.workflow_sessions.services import session_start
from reviewconsole.workflows.conditions import condition_error, condition_holds
from tests import call_binding
from tests.call_binding import SMALL
from tests.conftest import _user

refunds = call_binding.refunds
JSON = {"Accept": "application/json"}


def _confirmation(session) -> Item:
    [item] = Item.objects.filter(session=session, status="pending")
    assert item.function_name == "adk_request_confirmation"
    return item


def _approve_edited(client, item, amount, order="A-1"):
    fields = {
        "action": "approve",
        "interrupt_id": item.interrupt_id,
        "args_digest": item.metadata["args_digest"],
        "edit_args": "1",
        "args": f'{{"order_id": "{order}", "amount": {amount}}}',
    }
    return client.post(f"/inbox/items/{item.pk}/decide/", fields, headers=JSON)


def test_an_edit_that_would_need_four_eyes_is_refused(demo, personas, client, on_commit, refunds):
    PolicyRule.objects.create(
        workflow="refund-approval", name="fe-submit", tool="submit_refund", when="true",
        four_eyes_over="double(args.amount) > 1000.0",
    )  # fmt: skip
    with on_commit():
        session = session_start(workflow="refund-approval", data=SMALL, user_id="webhook:x")
    item = _confirmation(session)
    client.force_login(personas.other_reviewer)
    response = _approve_edited(client, item, 50000)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "decision_refused"
    assert "four eyes" in response.json()["error"]["message"]
    assert (call_binding.answers_to_people(session), refunds) == (0, [])
    with on_commit():
        assert _approve_edited(client, item, 15).status_code == 200  # the same verdict: one approval
    assert refunds == [{"order_id": "A-1", "amount": 15}]


def test_under_four_eyes_the_second_approver_cannot_edit_what_the_first_approved(
    demo, personas, client, on_commit, refunds
):
    PolicyRule.objects.create(
        workflow="refund-approval", name="fe-all", tool="submit_refund", when="true", four_eyes_over="true"
    )
    with on_commit():
        session = session_start(workflow="refund-approval", data=SMALL, user_id="webhook:x")
    item = _confirmation(session)
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve")
    assert FirstApproval.objects.count() == 1
    client.force_login(_user("manager"))
    response = _approve_edited(client, item, 50000)
    assert response.status_code == 400, response.content
    assert "Under four eyes the arguments cannot be edited" in response.json()["error"]["message"]
    assert refunds == []
    assert Item.objects.get(pk=item.pk).status == "pending"


def test_a_condition_that_raises_leaves_the_decision_to_people(demo, on_commit):
    when = "int(args.amount) / (int(args.amount) - 20) > 1"
    assert condition_error(when) is None  # valid CEL: it fails only for some calls
    assert condition_holds(when, args={"amount": 20}, state={}, default=False) is False
    assert condition_holds(when, args={"amount": 20}, state={}, default=True) is True
    PolicyRule.objects.create(workflow="refund-approval", name="ratio", tool="*", when=when, decide="approve")
    with on_commit():
        session = session_start(workflow="refund-approval", data=SMALL, user_id="webhook:x")
    [item] = Item.objects.filter(session=session, status="pending")  # the request reached the inbox
    assert not Answer.objects.filter(session=session, interrupt_id=item.interrupt_id).exists()


@pytest.mark.parametrize("args", ['{"amount": NaN}', '{"amount": 1e999}', "[" * 50_000 + "]" * 50_000])
def test_edited_arguments_that_are_not_finite_json_get_a_clear_400(demo, personas, client, on_commit, args):
    with on_commit():
        session = session_start(workflow="refund-approval", data=SMALL, user_id="webhook:x")
    item = _confirmation(session)
    client.force_login(personas.other_reviewer)
    fields = {
        "action": "approve",
        "interrupt_id": item.interrupt_id,
        "args_digest": item.metadata["args_digest"],
        "edit_args": "1",
        "args": args,
    }
    response = client.post(f"/inbox/items/{item.pk}/decide/", fields, headers=JSON)
    assert response.status_code == 400, response.content
    assert "JSON object" in response.json()["error"]["message"]
    assert call_binding.answers_to_people(session) == 0


def test_a_standing_approval_is_not_granted_with_edited_arguments(demo, personas, client, on_commit, refunds):
    """Found by this session's attack: an "exact arguments" standing approval given with an edit was
    stored for the arguments the reviewer had changed away from."""
    from reviewconsole.policies.models import StandingApproval

    PolicyRule.objects.create(workflow="refund-approval", name="person-submit", tool="submit_refund", when="true")
    with on_commit():
        session = session_start(workflow="refund-approval", data=SMALL, user_id="webhook:x")
    item = _confirmation(session)
    client.force_login(personas.other_reviewer)
    fields = {
        "action": "approve",
        "interrupt_id": item.interrupt_id,
        "args_digest": item.metadata["args_digest"],
        "edit_args": "1",
        "args": '{"order_id": "A-1", "amount": 15}',
        "standing": "exact",
        "standing_scope": "queue",
        "standing_hours": "24",
    }
    response = client.post(f"/inbox/items/{item.pk}/decide/", fields, headers=JSON)
    assert response.status_code == 400, response.content
    assert "standing approval" in response.json()["error"]["message"]
    assert (StandingApproval.objects.count(), refunds) == (0, [])


def test_a_standing_approval_never_approves_its_grantors_own_request(demo, personas, on_commit):
    """Found by this session's attack: the requester's own standing approval approved their request."""
    from reviewconsole.policies.standing import standing_grant

    standing_grant(
        workflow="refund-approval", tool="ask_for_approval", args={}, exact=False, scope="queue",
        session_id="", requester="", queue="finance", granted_by=personas.other_reviewer, hours=1,
        rule="refund-approval",
    )  # fmt: skip
    with on_commit():
        session = session_start(
            workflow="refund-approval",
            data={"order_id": "Q-1", "amount": 250, "reason": "x"},
            user_id=f"user:{personas.other_reviewer.get_username()}",
        )
    ask = Item.objects.get(session=session, function_name="ask_for_approval")
    assert ask.status == "pending"  # left to someone else
    with on_commit():
        other = session_start(
            workflow="refund-approval", data={"order_id": "Q-2", "amount": 250, "reason": "x"}, user_id="webhook:x"
        )
    assert Item.objects.get(session=other, function_name="ask_for_approval").decided_by_label.startswith(
        "standing approval"
    )  # it still approves other people's requests


def test_the_demo_refund_cannot_be_raised_by_an_edit(demo, personas, client, on_commit, refunds):
    """Found by this session's attack: on the demo as shipped one reviewer approved a $250 refund's
    ask_for_approval, then its submit_refund edited to $50,000. The refund's check refuses a raise."""
    with on_commit():
        session = session_start(
            workflow="refund-approval", data={"order_id": "A-1", "amount": 250, "reason": "broken"}, user_id="webhook:x"
        )
    [ask] = Item.objects.filter(session=session, status="pending")
    with on_commit():
        interrupt_decide(interrupt=ask, user=personas.other_reviewer, action="approve")
    item = _confirmation(session)
    client.force_login(personas.other_reviewer)
    response = _approve_edited(client, item, 50000)
    assert response.status_code == 400, response.content
    assert "may not be larger" in response.json()["error"]["message"]
    other = _approve_edited(client, item, 200, order="B-2")  # found in a new user's trial: another order
    assert (other.status_code, other.json()["error"]["code"]) == (400, "decision_refused")
    assert "must keep order_id A-1" in other.json()["error"]["message"]
    assert refunds == []
    with on_commit():
        assert _approve_edited(client, item, 200).status_code == 200  # lowering it is allowed
    assert refunds == [{"order_id": "A-1", "amount": 200}]


@pytest.mark.parametrize("amount", [-1000, 0, -0.01])
def test_the_demo_refund_cannot_be_edited_to_nothing_or_below(start_session, personas, client, refunds, amount):
    """Found by an attack: a $40 refund's submit_refund approved with edited arguments
    ``{"amount": -1000}`` ran, and the session ended "Your refund of $-1000.00 … has been submitted."
    (the webhook and the API refuse such an amount at the start). The refund's check refuses it."""
    session, [item] = start_session("refund-approval", {"order_id": "A-1", "amount": 40, "reason": "Late"})
    assert item.function_name == "adk_request_confirmation"  # the policy approved the ask; the call waits
    answers = Answer.objects.filter(session=session).count()  # the policy's answer to ask_for_approval
    client.force_login(personas.other_reviewer)
    response = _approve_edited(client, item, amount)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "decision_refused"
    assert "must be more than $0" in response.json()["error"]["message"]
    assert refunds == []
    item.refresh_from_db()
    assert (item.status, Answer.objects.filter(session=session).count()) == ("pending", answers)
