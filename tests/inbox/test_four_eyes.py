"""Four eyes (``inbox/items/policy_gate.py``): above the demo refund's limit two different people
approve; the first approval is recorded, pushed live and resumes nothing, the same person twice
and the requester are refused, in the inbox and the API, whose interrupts name both approvers."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.policy_gate import FourEyesError, approvals_of
from reviewconsole.inbox.live.messages import change_message
from reviewconsole.inbox.models import Item, QueueChange
from reviewconsole.policies.models import FirstApproval, PolicyVerdict
from reviewconsole.workflow_sessions.models import Answer
from reviewconsole.workflow_sessions.services import session_start
from tests.api.conftest import auth, make_api_client, post
from tests.conftest import _user

LARGE = {"order_id": "B-9", "amount": 1500, "reason": "never arrived"}


@pytest.fixture
def large(demo, on_commit):
    """A $1,500 refund waiting for its approval; ``start(user_id=...)`` names its requester."""

    def start(user_id="webhook:refund-approval"):
        with on_commit():
            session = session_start(workflow="refund-approval", data=LARGE, user_id=user_id)
        return Item.objects.get(session=session, status="pending")

    return start


def test_the_first_approval_is_recorded_and_resumes_nothing(large, personas, on_commit):
    item = large()
    assert PolicyVerdict.objects.get(session_interrupt=item.session_interrupt).approvals_required == 2
    assert approvals_of(item)["given"] == 0
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked the order.")
    item.refresh_from_db()
    assert item.is_pending
    assert not Answer.objects.filter(session=item.session).exclude(interrupt_id="").exists()
    shown = approvals_of(item)
    assert (shown["given"], shown["required"], shown["first_by"]) == (1, 2, "p-other")
    [entry] = AuditEntry.objects.filter(action="interrupt.approve_first")
    assert (entry.actor, entry.target_id, entry.detail["policy"]) == ("user:p-other", str(item.pk), "refund-approval")


def test_the_page_shows_one_of_two_approvals_and_by_whom(large, personas, client, on_commit):
    item = large()
    client.force_login(personas.other_reviewer)
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve", "reason": "Checked the order."})
    assert response.status_code == 302
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert "Four eyes: 1 of 2 approvals, by p-other" in page


def test_the_same_person_twice_is_refused(large, personas, client, on_commit):
    item = large()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked the order.")
    with pytest.raises(FourEyesError, match="a second, different person must approve"):
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked the order.")
    client.force_login(personas.other_reviewer)
    response = client.post(
        f"/inbox/items/{item.pk}/decide/",
        {"action": "approve", "reason": "Checked the order."},
        headers={"accept": "application/json"},
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "four_eyes"
    item.refresh_from_db()
    assert item.is_pending
    assert FirstApproval.objects.count() == 1


def test_the_requester_never_approves_their_own(large, personas, client):
    item = large(user_id=f"user:{personas.other_reviewer.get_username()}")
    with pytest.raises(PermissionDenied, match="someone else must approve it"):
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked the order.")
    client.force_login(personas.other_reviewer)
    response = client.post(
        f"/inbox/items/{item.pk}/decide/",
        {"action": "approve", "reason": "Checked the order."},
        headers={"accept": "application/json"},
    )
    assert response.status_code == 403
    assert "someone else must approve it" in response.json()["error"]["message"]
    assert not FirstApproval.objects.exists()


def test_two_people_resume_the_session_once(large, personas, on_commit):
    item = large()
    second = _user("manager")
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked the order.")
    with on_commit():
        interrupt_decide(interrupt=item, user=second, action="approve", reason="Checked the order.")
    item.refresh_from_db()
    assert (item.status, item.decision, item.decided_by_label) == ("resolved", "approve", "p-other and manager")
    answers = Answer.objects.filter(session=item.session, interrupt_id=item.interrupt_id)
    assert answers.count() == 1
    session = item.session
    session.refresh_from_db()
    pending = list(session.items.filter(status="pending"))
    assert [p.function_name for p in pending] == ["adk_request_confirmation"], "the workflow went on once"
    with pytest.raises(Exception, match="already approved by p-other and manager"):
        interrupt_decide(interrupt=item, user=personas.admin, action="approve", reason="Checked the order.")
    again = interrupt_decide(interrupt=item, user=second, action="approve", reason="Checked the order.")
    assert again.decided_by_label == "p-other and manager", "the second approver's repeat is a no-op"
    assert answers.count() == 1


def test_one_person_may_reject_alone(large, personas, on_commit):
    item = large()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="reject", reason="Fraud suspected")
    item.refresh_from_db()
    assert (item.decision, item.response) == ("reject", {"status": "rejected", "reason": "Fraud suspected"})


def test_the_api_cannot_give_a_four_eyes_approval(large, client):
    item = large()
    _, token = make_api_client()
    body = {"interrupt_id": item.interrupt_id, "payload": {"status": "approved"}}
    response = post(client, f"/api/v1/sessions/{item.session_id}/resume", body, token)
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "four_eyes_required"
    item.refresh_from_db()
    assert item.is_pending


def test_the_api_client_that_asked_gives_a_one_approval_result(start_session, client, on_commit):
    """As the README's refund through the API: the outside system's late result is no person's own approval."""
    _, token = make_api_client()
    with on_commit():
        started = post(
            client, "/api/v1/sessions", {"workflow": "refund-approval", "input": LARGE | {"amount": 250}}, token
        )
    session_id = started.json()["session_id"]
    item = Item.objects.get(session_id=session_id, status="pending")
    assert item.session.user_id == "client:partner"
    body = {"interrupt_id": item.interrupt_id, "payload": {"status": "approved"}}
    with on_commit():
        response = post(client, f"/api/v1/sessions/{session_id}/resume", body, token)
    assert response.status_code == 202, response.content


def test_the_decided_item_keeps_both_approvers_and_their_reasons(large, personas, client, on_commit):
    """Found by this session's trial: after the second approval the page named only the second
    approver and reason; the first lived only in the admin's first approvals."""
    item = large()
    with on_commit():
        interrupt_decide(
            interrupt=item, user=personas.other_reviewer, action="approve", reason="Courier <b>lost</b> it"
        )
    client.force_login(personas.admin)
    waiting = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert "(reason: Courier &lt;b&gt;lost&lt;/b&gt; it)" in waiting
    with on_commit():
        interrupt_decide(interrupt=item, user=_user("manager"), action="approve", reason="Second check ok")
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert "Four eyes: the first approval was by p-other at" in page
    assert "(reason: Courier &lt;b&gt;lost&lt;/b&gt; it).</p>" in page
    assert 'By <span id="decision-by">p-other and manager</span>' in page and "then by" not in page
    assert "Second check ok" in page
    [first] = AuditEntry.objects.filter(action="interrupt.approve_first")
    assert first.detail["reason"] == "Courier <b>lost</b> it"


def test_the_api_shows_both_approvers_as_the_page_does(large, personas, client, on_commit):
    """Found by the last session's review: the API's interrupt named only the second approver."""
    item = large()
    _, token = make_api_client()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Courier lost it")
    read = client.get(f"/api/v1/sessions/{item.session_id}", headers=auth(token))
    assert read.status_code == 200, read.content
    waiting = read.json()["interrupts"][0]
    assert waiting["approvals"]["required"] == 2 and waiting["decided_by"] is None
    assert [(a["by"], a["reason"]) for a in waiting["approvals"]["approvers"]] == [("p-other", "Courier lost it")]
    with on_commit():
        interrupt_decide(interrupt=item, user=_user("manager"), action="approve", reason="Second check ok")
    for shown in (
        client.get(f"/api/v1/sessions/{item.session_id}", headers=auth(token)).json()["interrupts"][0],
        next(
            i
            for i in client.get("/api/v1/interrupts?status=resolved", headers=auth(token)).json()["interrupts"]
            if i["id"] == item.interrupt_id
        ),
    ):
        assert shown["decided_by"] == "p-other and manager"
        assert shown["approvals"]["rule"] == "refund-approval"
        approvers = [(a["by"], a["reason"]) for a in shown["approvals"]["approvers"]]
        assert approvers == [("p-other", "Courier lost it"), ("manager", "Second check ok")]
        assert shown["approvals"]["approvers"][0]["at"] < shown["approvals"]["approvers"][1]["at"]


def test_a_first_approval_is_pushed_live_to_the_queue(large, personas, on_commit):
    """Found by the last session's review: open inboxes and pages heard nothing of a first approval."""
    item = large()
    before = QueueChange.objects.filter(item=item).count()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Checked")
    [change] = QueueChange.objects.filter(item=item).order_by("id")[before:]
    assert (change.event, change.queue_id) == ("interrupt.approved_first", item.queue_id)
    message = change_message(change)
    assert message["item"]["status"] == "pending"
    assert message["item"]["approvals"]["approvers"][0]["by"] == "p-other"
    assert "Approved once, by p-other at " in message["item"]["sentence"]
    assert message["item"]["sentence"].endswith("a second, different person must approve.")


def test_everywhere_the_decider_is_named_both_approvers_are(large, personas, client, on_commit):
    """After the second approval the decided page, the resolved list, the admin, the decision's
    audit entry and the session's timeline named only the second approver; the timeline had no
    entry for the first approval."""
    item = large()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Courier lost it")
    client.force_login(_user("manager"))
    with on_commit():
        decided = client.post(
            f"/inbox/items/{item.pk}/decide/",
            {"action": "approve", "reason": "Second check ok", "interrupt_id": item.interrupt_id},
            headers={"accept": "application/json"},
        )
    assert decided.status_code == 200, decided.content
    both = "p-other and manager"
    assert decided.json()["receipt"]["decided_by"] == both
    client.force_login(personas.admin)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert f'id="decision-by">{both}<' in page and page.count(both) == 1  # named once, both of them
    listed = client.get("/inbox/?status=resolved").content.decode()
    assert f'data-label="Decided by">{both}<' in listed
    admin = client.get("/admin/inbox/item/").content.decode()
    assert f">{both}<" in admin
    entry = AuditEntry.objects.filter(action="interrupt.decide").latest("id")
    assert entry.detail["approvers"] == ["p-other", "manager"]
    session = client.get(f"/admin/workflow_sessions/workflowsession/{item.session_id}/change/").content.decode()
    first = session.index("first approval</small>")
    assert "p-other" in session[first : first + 400]
    assert "the first of two approvals (reason: Courier lost it)" in session
    assert f"by {both} at" in session[first:], "the second approval's decision comes after the first, naming both"


def test_my_decisions_lists_a_four_eyes_decision_for_both_approvers(large, personas, client, on_commit):
    """Found in a new user's trial: the first approver's "my decisions" left the request out."""
    item = large()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.other_reviewer, action="approve", reason="Courier lost it")
    with on_commit():
        interrupt_decide(interrupt=item, user=_user("manager"), action="approve", reason="Second check ok")
    for approver in (personas.other_reviewer, _user("manager")):
        client.force_login(approver)
        mine = client.get("/inbox/items.json?my_decisions=1").json()["items"]
        assert [row["id"] for row in mine] == [item.pk], approver
    client.force_login(personas.admin)
    assert client.get("/inbox/items.json?my_decisions=1").json()["items"] == []
