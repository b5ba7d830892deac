"""Standing approvals (``inbox/items/standing_grants.py``, ``policies/standing.py``): granted with an
approval on a policy-governed item, used by later requests they cover (recorded in the timeline and
the audit log: who granted it, when), ended by their expiry and by a revocation in the admin."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.timeline import timeline
from reviewconsole.inbox.models import Item
from reviewconsole.policies.models import StandingApproval

MID = {"order_id": "C-1", "amount": 250, "reason": "broken"}
ALICE = "user:alice"  # a person who starts refunds in the console (the "user" scope covers her sessions)


def _grant(client, user, item, on_commit, **fields):
    client.force_login(user)
    with on_commit():
        return client.post(
            f"/inbox/items/{item.pk}/decide/",
            {"action": "approve", "standing_hours": "24", **fields},
            headers={"accept": "application/json"},
        )


def _approval(session):
    return Item.objects.filter(session=session, function_name="ask_for_approval").get()


def test_an_exact_standing_approval_decides_the_next_identical_call(start_session, personas, client, on_commit):
    _, [first] = start_session("refund-approval", MID, user_id=ALICE)
    response = _grant(client, personas.other_reviewer, first, on_commit, standing="exact", standing_scope="user")
    assert response.status_code == 200, response.content
    standing = StandingApproval.objects.get()
    assert (standing.tool, standing.scope, standing.requester, standing.args) == (
        "ask_for_approval",
        "user",
        ALICE,
        {"order_id": "C-1", "amount": 250.0, "reason": "broken"},
    )
    grant = AuditEntry.objects.get(action="policy.standing_grant")
    assert (grant.actor, grant.target_id) == ("user:p-other", str(standing.pk))

    later, pending = start_session("refund-approval", MID, user_id=ALICE)
    used = _approval(later)
    assert used.status == "resolved"
    assert used.decided_by_label == f"standing approval #{standing.pk} (granted by p-other)"
    assert used.reason == ""  # it gives no reason on a person's behalf; who granted it is in the audit
    assert [p.function_name for p in pending] == ["adk_request_confirmation"]
    standing.refresh_from_db()
    assert standing.uses == 1
    entry = AuditEntry.objects.get(action="interrupt.decide", target_id=str(used.pk))
    assert entry.actor == f"standing_approval:{standing.pk}"
    assert entry.detail["granted_by"] == "p-other"
    assert entry.detail["granted_at"] == standing.granted_at.isoformat()
    decided = [d for row in timeline(later) for d in row.decisions]
    assert [d.decided_by for d in decided] == [used.decided_by_label]


def test_exact_arguments_cover_no_other_call_and_the_tool_covers_any(start_session, personas, client, on_commit):
    _, [first] = start_session("refund-approval", MID)
    _grant(client, personas.other_reviewer, first, on_commit, standing="exact", standing_scope="queue")
    _, [waiting] = start_session("refund-approval", {**MID, "amount": 260})
    assert waiting.function_name == "ask_for_approval", "other arguments: a person decides"
    _grant(client, personas.other_reviewer, waiting, on_commit, standing="tool", standing_scope="queue")
    third, _ = start_session("refund-approval", {"order_id": "D-4", "amount": 200, "reason": "lost"})
    assert _approval(third).decided_by_label.startswith("standing approval #")
    _, [larger] = start_session("refund-approval", {"order_id": "D-5", "amount": 261, "reason": "lost"})
    assert larger.function_name == "ask_for_approval", "larger than the approved call: a person decides"


def test_an_expired_standing_approval_decides_nothing(start_session, personas, client, on_commit):
    _, [first] = start_session("refund-approval", MID, user_id=ALICE)
    _grant(client, personas.other_reviewer, first, on_commit, standing="tool", standing_scope="user")
    StandingApproval.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    _, [waiting] = start_session("refund-approval", MID, user_id=ALICE)
    assert waiting.function_name == "ask_for_approval"
    assert StandingApproval.objects.get().uses == 0


def test_a_revoked_standing_approval_decides_nothing(start_session, personas, client, on_commit):
    _, [first] = start_session("refund-approval", MID, user_id=ALICE)
    _grant(client, personas.other_reviewer, first, on_commit, standing="tool", standing_scope="user")
    standing = StandingApproval.objects.get()
    client.force_login(personas.admin)
    listed = client.get("/admin/policies/standingapproval/")
    assert listed.status_code == 200
    assert "ask_for_approval" in listed.content.decode()
    response = client.post("/admin/policies/standingapproval/", {"action": "revoke", "_selected_action": [standing.pk]})
    assert response.status_code == 302
    standing.refresh_from_db()
    assert standing.revoked_at is not None and standing.revoked_by == personas.admin
    assert AuditEntry.objects.filter(action="policy.standing_revoke", target_id=str(standing.pk)).count() == 1
    _, [waiting] = start_session("refund-approval", MID, user_id=ALICE)
    assert waiting.function_name == "ask_for_approval"


def test_no_standing_approval_under_four_eyes_or_without_an_approval(start_session, personas, client, on_commit):
    _, [large] = start_session("refund-approval", {"order_id": "E-5", "amount": 5000, "reason": "lost"})
    response = _grant(client, personas.other_reviewer, large, on_commit, standing="tool", standing_scope="queue")
    assert response.status_code == 400
    assert "two approvals" in response.json()["error"]["message"]
    assert not StandingApproval.objects.exists()
    large.refresh_from_db()
    assert large.is_pending, "nothing was recorded, not even the first approval"
    _, [mid] = start_session("refund-approval", MID)
    response = _grant(
        client, personas.other_reviewer, mid, on_commit, standing="tool", standing_scope="queue", standing_hours="9999"
    )
    assert response.status_code == 400
    assert not StandingApproval.objects.exists()
