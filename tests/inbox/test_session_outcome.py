"""A decided item's page says how its session went on: its status, and once it ended, its result
(a text output, else the session's last message, else the output as JSON), escaped; status.json
and the session JSON too."""

from __future__ import annotations

import re
from html import unescape

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.workflow_sessions.outcome import session_outcome
from reviewconsole.workflow_sessions.services import session_cancel_sync


def _section(page):
    return re.search(r'<section class="outcome" id="session-outcome".*?</section>', page, re.S).group(0)


def _decide(on_commit, item, user, action, **kwargs):
    with on_commit():
        interrupt_decide(interrupt=item, user=user, action=action, **kwargs)


def test_an_approved_email_review_shows_the_session_completed_with_its_last_message(
    client, manager, start_review, on_commit
):
    _, item = start_review()
    _decide(on_commit, item, manager, "approve")
    client.force_login(manager)
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert "hidden" not in section.split(">", 1)[0]
    assert 'id="session-status" data-status="completed">completed<' in section
    assert re.search(r'id="session-result">Draft approved and sent successfully\.<', section)
    assert 'id="session-note"></span>' in section


def test_a_rejected_email_review_shows_draft_rejected(client, manager, start_review, on_commit):
    _, item = start_review()
    _decide(on_commit, item, manager, "reject", reason="Customer already refunded")
    client.force_login(manager)
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert re.search(r'id="session-result">Draft rejected\.<', section)


def test_a_refund_shows_the_session_output(client, personas, start_session, on_commit):
    _, [item] = start_session("refund-approval", {"order_id": "B-2", "amount": 40, "reason": "late"})
    client.force_login(personas.admin)
    assert "Rejecting means the refund is never submitted." in client.get(f"/inbox/items/{item.pk}/").content.decode()
    _decide(on_commit, item, personas.admin, "approve")
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert "Your refund of $40.00 for order B-2 has been submitted." in unescape(section)
    assert "Rejecting means" not in client.get(f"/inbox/items/{item.pk}/").content.decode()  # said while pending


def test_a_session_still_going_says_so_and_shows_no_result(client, manager, start_review, on_commit):
    _, item = start_review()
    _decide(on_commit, item, manager, "revise", text="shorter")  # a new draft waits for review
    client.force_login(manager)
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert 'data-status="waiting">waiting for input<' in section
    assert "It asks for another decision: reload this page to see how it ends." in section
    assert re.search(r'<div class="pre draft" id="session-result" hidden></div>', section)


def test_between_the_decision_and_its_run_the_session_is_resuming_not_waiting_for_input(
    client, manager, start_review, on_commit, settings
):
    _, item = start_review()
    queued = {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "outbound"]}
    settings.TASKS = {"default": queued}  # the run is queued, not run yet
    _decide(on_commit, item, manager, "approve")
    client.force_login(manager)
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert 'data-status="waiting" data-resuming>resuming<' in section
    assert "It has not ended yet: this page shows how it ends." in section
    outcome = client.get(f"/inbox/items/{item.pk}/status.json").json()["session"]
    assert (outcome["status"], outcome["status_label"], outcome["resuming"], outcome["ended"]) == (
        "waiting",
        "Resuming",
        True,
        False,
    )


def test_a_pending_item_keeps_the_section_hidden(client, manager, start_review):
    _, item = start_review()
    client.force_login(manager)
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert section.startswith('<section class="outcome" id="session-outcome"')
    assert " hidden>" in section.split("\n", 1)[0]


def test_the_result_is_escaped(client, personas, start_session, on_commit):
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    client.force_login(personas.admin)
    data = {
        "action": "answer",
        "f.severity": '"low"',
        "f.summary": "Pay <script>alert(1)</script> fails",
        "f.affected_customers": "1",
        "f.contact.name": "Dana",
    }
    with on_commit():
        assert client.post(f"/inbox/items/{item.pk}/decide/", data).status_code == 302
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    section = _section(page)
    assert "Logged a low incident: Pay &lt;script&gt;alert(1)&lt;/script&gt; fails" in section
    assert "<script>alert" not in page


def test_status_json_carries_the_session_for_a_page_left_open(client, manager, start_review, on_commit):
    session, item = start_review()
    client.force_login(manager)
    before = client.get(f"/inbox/items/{item.pk}/status.json").json()["session"]
    assert (before["status"], before["ended"], before["result"]) == ("waiting", False, None)
    _decide(on_commit, item, manager, "approve")
    after = client.get(f"/inbox/items/{item.pk}/status.json").json()["session"]
    assert after == {
        "id": session.id,
        "status": "completed",
        "status_label": "Completed",
        "ended": True,
        "resuming": False,
        "result": "Draft approved and sent successfully.",
    }


def test_the_session_json_has_the_result_when_the_workflow_gives_no_output(
    client, auditor, manager, start_review, on_commit
):
    session, item = start_review()
    _decide(on_commit, item, manager, "approve")
    client.force_login(auditor)
    data = client.get(f"/api/sessions/{session.id}/").json()
    assert (data["status"], data["output"], data["result"]) == (
        "completed",
        None,
        "Draft approved and sent successfully.",
    )


def test_a_structured_output_without_a_message_is_the_result_as_json(start_review):
    session, _ = start_review()
    session.events.exclude(author="user").delete()
    session.status, session.output = "completed", {"decision": "rejected", "email": None}
    session.save(update_fields=["status", "output"])
    assert session_outcome(session)["result"] == '{\n  "decision": "rejected",\n  "email": null\n}'


def test_a_failed_session_shows_a_generic_failure_sentence_not_the_exception(start_review):
    session, _ = start_review()
    error = {"code": "node_failed", "message": "Node x@1 failed: key sk-1", "node_path": "x@1", "exception": "E()"}
    session.status, session.error = "failed", error
    session.save(update_fields=["status", "error"])
    outcome = session_outcome(session)
    sentence = (
        "A step of the workflow raised an error (node x@1). Error code: node_failed. The details are in the server log."
    )
    assert (outcome["ended"], outcome["status_label"], outcome["result"]) == (True, "Failed", sentence)


def test_a_cancelled_review_gives_what_its_cancel_said_never_the_unsent_draft(
    client, auditor, manager, start_review, on_commit
):
    """A waiting email review cancelled as a whole: the draft it waited on was never sent, so it
    is not the result (the page said "The session is cancelled." above the email's text)."""
    session, item = start_review()
    draft = session.state["draft"]
    with on_commit():
        session_cancel_sync(session, reason="The customer withdrew the complaint.")
    client.force_login(manager)
    outcome = client.get(f"/inbox/items/{item.pk}/status.json").json()["session"]
    assert (outcome["status"], outcome["result"]) == ("cancelled", "The customer withdrew the complaint.")
    section = _section(client.get(f"/inbox/items/{item.pk}/").content.decode())
    assert "The customer withdrew the complaint." in section
    assert draft.splitlines()[0] not in unescape(section)
    client.force_login(auditor)
    assert client.get(f"/api/sessions/{session.id}/").json()["result"] == "The customer withdrew the complaint."


def test_a_cancel_without_a_reason_says_the_session_was_cancelled(start_review, on_commit):
    session, _ = start_review()
    with on_commit():
        session_cancel_sync(session)
    session.refresh_from_db()
    assert session_outcome(session)["result"] == "The session was cancelled."
