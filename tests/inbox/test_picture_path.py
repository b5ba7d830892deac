"""The workflow picture marks every node and tool that ran, through to the session's end (issue 17:
a finished refund's picture said "Path so far: refund_agent", its tools grey as if never run)."""

from __future__ import annotations

import re

from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pictures.graph import ASKED, DECLINED, RAN, tool_runs
from reviewconsole.inbox.pictures.serving import session_picture

REFUND = {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"}


def _finish_refund(client, user, start_session, on_commit, second):
    session, [asked] = start_session("refund-approval", REFUND)
    client.force_login(user)
    with on_commit():
        client.post(f"/inbox/items/{asked.pk}/decide/", {"action": "approve"})
    submit = Item.objects.get(session=session, status="pending")
    with on_commit():
        client.post(f"/inbox/items/{submit.pk}/decide/", {"action": second, "reason": "Not this time"})
    session.refresh_from_db()
    assert session.status == "completed"
    return session, asked


def _classes(mermaid, name):
    """The classes the picture gives node ``name``."""
    node = re.search(rf'(n\d+)\(?\["{re.escape(name)}', mermaid).group(1)
    return {m.group(2) for m in re.finditer(r"class ([n\d,]+) (\w+)", mermaid) if node in m.group(1).split(",")}


def test_a_finished_refund_marks_both_tools_as_run(client, personas, start_session, on_commit):
    session, asked = _finish_refund(client, personas.admin, start_session, on_commit, "approve")
    picture = session_picture(session)
    assert picture.steps == ["refund_agent", "ask_for_approval", "submit_refund"]
    assert picture.ended and picture.waiting == [] and picture.declined == []
    assert _classes(picture.mermaid, "ask_for_approval") == {"taken"}
    assert _classes(picture.mermaid, "submit_refund") == {"taken"}
    for link in (0, 1, 2):  # START → agent and both tool links drawn as the path
        assert f"linkStyle {link} stroke:#1e7d3b" in picture.mermaid
    client.force_login(personas.admin)
    page = client.get(f"/inbox/items/{asked.pk}/").content.decode()
    assert "Path taken: " in page and "Path so far" not in page
    assert re.search(r'id="path-steps">refund_agent → ask_for_approval → submit_refund<', page)
    assert 'id="path-end">the session has ended<' in page


def test_a_declined_submission_is_drawn_as_declined_not_run(client, personas, start_session, on_commit):
    session, _ = _finish_refund(client, personas.admin, start_session, on_commit, "reject")
    picture = session_picture(session)
    assert picture.steps == ["refund_agent", "ask_for_approval"]
    assert picture.declined == ["submit_refund"]
    assert _classes(picture.mermaid, "submit_refund") == {"declined"}
    assert "linkStyle 2 " not in picture.mermaid


def test_a_waiting_refund_says_path_so_far_and_where_it_waits(start_session):
    session, _ = start_session("refund-approval", REFUND)
    picture = session_picture(session)
    assert not picture.ended
    assert picture.steps == ["refund_agent", "ask_for_approval"]  # it ran: its answer is pending
    assert "ask_for_approval" in picture.waiting


def test_a_submission_awaiting_confirmation_is_drawn_as_waiting(client, personas, start_session, on_commit):
    """Found in a new user's trial: the refund waiting on its confirmation read "declined: submit_refund"."""
    session, [asked] = start_session("refund-approval", REFUND)
    client.force_login(personas.admin)
    with on_commit():
        client.post(f"/inbox/items/{asked.pk}/decide/", {"action": "approve"})
    submit = Item.objects.get(session=session, status="pending")
    picture = session_picture(session)
    assert (picture.asked, picture.declined) == (["submit_refund"], [])
    assert _classes(picture.mermaid, "submit_refund") == {"waiting"}
    assert picture.steps == ["refund_agent", "ask_for_approval"]
    page = client.get(f"/inbox/items/{submit.pk}/").content.decode()
    assert 'awaiting confirmation: <strong id="asked-at">submit_refund</strong>' in page
    assert 'id="declined-at"' not in page
    with on_commit():
        client.post(f"/inbox/items/{submit.pk}/decide/", {"action": "approve"})
    session.refresh_from_db()
    done = session_picture(session)  # then it ran: every node through to the end is taken
    assert (done.ended, done.asked, done.waiting, done.declined) == (True, [], [], [])
    assert done.steps == ["refund_agent", "ask_for_approval", "submit_refund"]
    assert _classes(done.mermaid, "submit_refund") == {"taken"}
    assert _classes(done.mermaid, "refund_agent (agent)") == {"taken"}


def test_a_finished_email_review_walks_to_its_last_node(client, manager, start_session, on_commit):
    session, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    client.force_login(manager)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    session.refresh_from_db()
    picture = session_picture(session)
    assert picture.ended and picture.steps[-2:] == ["handle_human_review", "send_email"]
    assert _classes(picture.mermaid, "send_email") == {"taken"}


def _call(name, call_id, **args):
    return {"content": {"parts": [{"functionCall": {"id": call_id, "name": name, "args": args}}]}}


def _response(name, call_id, body):
    return {"content": {"parts": [{"functionResponse": {"id": call_id, "name": name, "response": body}}]}}


def test_tool_runs_give_each_call_its_state_ran_asked_or_declined():
    requires = {"error": "This tool call requires confirmation, please approve or reject."}
    asks = {"originalFunctionCall": {"id": "c2", "name": "pay", "args": {}}}
    waits = {"originalFunctionCall": {"id": "c3", "name": "pay", "args": {}}}
    data = [
        _response("lookup", "c1", {"ok": 1}),
        _call("adk_request_confirmation", "a2", **asks),
        _response("pay", "c2", requires),
        _response("adk_request_confirmation", "a2", {"confirmed": False}),
        _response("pay", "c2", {"error": "declined"}),
        _call("adk_request_confirmation", "a3", **waits),
        _response("pay", "c3", requires),
        _response("fail", "c4", {"error": "boom"}),
        {"content": {"parts": [{"text": "hello"}]}},
        {},
        None,
    ]
    assert tool_runs(data) == [("lookup", RAN), ("pay", DECLINED), ("pay", ASKED), ("fail", DECLINED)]
    assert tool_runs([*data, _response("pay", "c3", {"status": "paid"})])[2] == ("pay", RAN)
