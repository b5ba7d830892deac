"""The decision next to the answer that carried it: the admin timeline and the session JSON show
what was decided, the reason or comment given and the reviewer's edit of the draft (escaped)."""

from __future__ import annotations

import re

from reviewconsole.console.timeline import timeline
from reviewconsole.inbox.items.decisions import interrupt_decide

SESSIONS = "/admin/workflow_sessions/workflowsession/"


def _decide(on_commit, item, user, action, **kwargs):
    with on_commit():
        interrupt_decide(interrupt=item, user=user, action=action, **kwargs)


def _answer_row(page, seq):
    """The timeline row of event ``seq`` (its cells' HTML)."""
    rows = re.findall(r"<tr>\s*<td>(\d+)</td>(.*?)</tr>", page, re.S)
    return dict(rows)[str(seq)]


def test_a_rejection_shows_its_reason_in_the_timeline_and_the_json(client, auditor, manager, start_review, on_commit):
    session, item = start_review()
    _decide(on_commit, item, manager, "reject", reason="Customer already refunded <b>twice</b>")
    answer = next(r for r in timeline(session) if r.author == "user" and r.decisions)
    [decision] = answer.decisions
    assert (decision.decision, decision.decided_by, decision.reason, decision.edits) == (
        "reject",
        "manager",
        "Customer already refunded <b>twice</b>",
        [],
    )

    client.force_login(auditor)
    page = client.get(f"{SESSIONS}{session.id}/change/").content.decode()
    row = _answer_row(page, answer.seq)
    assert "decision: <strong>reject</strong> by manager" in row
    assert "reason: Customer already refunded &lt;b&gt;twice&lt;/b&gt;" in row
    assert "<b>twice</b>" not in page

    [interrupt] = client.get(f"/api/sessions/{session.id}/").json()["interrupts"]
    assert (interrupt["decision"], interrupt["reason"], interrupt["edits"]) == (
        "reject",
        "Customer already refunded <b>twice</b>",
        None,
    )


def test_an_edited_draft_shows_the_edit_next_to_the_approval(client, auditor, manager, start_review, on_commit):
    session, item = start_review()
    draft = session.state["draft"]
    edited = draft.replace("Kind regards", "Best <wishes>")
    _decide(on_commit, item, manager, "approve", draft=edited)
    answer = next(r for r in timeline(session) if r.author == "user" and r.decisions)
    edits = [(line.op, line.text) for line in answer.decisions[0].edits]
    assert ("-", "Kind regards,") in edits and ("+", "Best <wishes>,") in edits

    client.force_login(auditor)
    row = _answer_row(client.get(f"{SESSIONS}{session.id}/change/").content.decode(), answer.seq)
    assert "decision: <strong>approve</strong> by manager" in row
    assert "<del>- Kind regards,</del>" in row and "<ins>+ Best &lt;wishes&gt;,</ins>" in row
    [interrupt] = client.get(f"/api/sessions/{session.id}/").json()["interrupts"]
    assert "+Best <wishes>," in interrupt["edits"].splitlines()


def test_a_tools_own_response_is_not_taken_for_the_decision(personas, start_session, on_commit):
    session, [item] = start_session("refund-approval", {"order_id": "A-1", "amount": 250, "reason": "broken"})
    _decide(on_commit, item, personas.admin, "reject", reason="Customer already refunded")
    rows = timeline(session)
    decided = [(r.author, r.decided_by, [(d.decision, d.reason) for d in r.decisions]) for r in rows if r.decided_by]
    # Only the person's answer, not the tool's "pending" response to the same call id.
    assert decided == [("user", "p-admin", [("reject", "Customer already refunded")])]
