"""Rewinds over AG-UI (``forwardedProps.checkpointId``): a closed session stays closed, and a
decision made outside the thread (a reviewer in the inbox, an API client) is never reopened."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from engine import FunctionCall
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)

REFUND = {"order_id": "o-7", "amount": 500, "reason": "broken"}


def refund_script(scripted, *, approved):
    """The refund agent: ask_for_approval, then (approved) submit_refund with a confirmation, or a reply."""
    after = (
        [FunctionCall(name="submit_refund", args={"order_id": "o-7", "amount": 500.0}), "Refund submitted."]
        if approved
        else ["The refund was not approved."]
    )
    scripted("refund-approval", [FunctionCall(name="ask_for_approval", args=REFUND), "Waiting.", *after])


async def api(token, path, data):
    from django.test import AsyncClient

    response = await AsyncClient().post(
        f"/api/v1{path}",
        json.dumps(data),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code < 300, response.content
    return response.json()


def inbox_decide(interrupt_id, action, **options):
    from reviewconsole.inbox.items.decisions import interrupt_decide
    from reviewconsole.inbox.models import Item
    from tests.conftest import _user

    item = Item.objects.get(interrupt_id=interrupt_id, status="pending")
    interrupt_decide(interrupt=item, user=_user("manager"), action=action, **options)


def snapshot(session_id):
    """What a refused rewind must leave alone: the session row, its interrupts, events and deliveries."""
    from reviewconsole.inbox.models import Item
    from reviewconsole.workflow_sessions.models import WorkflowSession

    row = WorkflowSession.objects.get(pk=session_id)
    interrupts = list(
        Item.objects.filter(session_id=session_id)
        .order_by("id")
        .values_list("id", "interrupt_id", "status", "decided_by_label", "response")
    )
    return {
        "session": (row.status, row.version, row.checkpoint_id, row.last_seq, row.output, row.state),
        "interrupts": interrupts,
        "answers": list(row.answers.values_list("id", "applied_at")),
    }


async def start_refund(agui, thread):
    first = well_formed(await agui("refund-approval", body(thread, json.dumps(REFUND))))
    [approval] = first.interrupts
    return first.of("CUSTOM", "status")[0]["value"]["sessionId"], approval


async def test_a_session_a_reviewer_closed_cannot_be_rewound_and_approved(agui, scripted):
    from reviewconsole.demo.refund_approval import submitted_refunds

    refund_script(scripted, approved=False)
    submitted_refunds.clear()
    session_id, approval = await start_refund(agui, "t-rw-closed")
    await sync_to_async(inbox_decide)(approval["id"], "reject", reason="fraud suspected")
    before = await sync_to_async(snapshot)(session_id)
    assert before["session"][0] == "completed"

    forwarded = {"checkpointId": approval["metadata"]["checkpointId"]}
    entries = resume(approval, {"status": "approved"})
    run = well_formed(await agui("refund-approval", body("t-rw-closed", resume=entries, forwarded=forwarded)))

    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == "session_closed"
    assert await sync_to_async(snapshot)(session_id) == before
    assert submitted_refunds == []


async def test_a_session_cancelled_through_the_api_is_not_revived(agui, scripted, token):
    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-rw-cancel", "Cancel me")))
    [interrupt] = first.interrupts
    session_id = first.of("CUSTOM", "status")[0]["value"]["sessionId"]
    await api(token, f"/sessions/{session_id}/cancel", {"reason": "customer withdrew"})
    before = await sync_to_async(snapshot)(session_id)
    assert before["session"][0] == "cancelled"

    forwarded = {"checkpointId": interrupt["metadata"]["checkpointId"]}
    run = well_formed(
        await agui("email-review", body("t-rw-cancel", resume=resume(interrupt, "approve"), forwarded=forwarded))
    )

    assert run.last["code"] == "session_closed"
    message = well_formed(await agui("email-review", body("t-rw-cancel", "Start again")))
    assert message.last["code"] == "session_closed"
    assert await sync_to_async(snapshot)(session_id) == before


@pytest.mark.parametrize("door", ["inbox", "api"])
async def test_a_rewind_never_reopens_a_decision_made_outside_the_thread(agui, scripted, token, door):
    from reviewconsole.demo.refund_approval import submitted_refunds

    refund_script(scripted, approved=True)
    submitted_refunds.clear()
    thread = f"t-rw-decided-{door}"
    session_id, approval = await start_refund(agui, thread)
    if door == "inbox":
        await sync_to_async(inbox_decide)(approval["id"], "approve")
        decider = "manager"
    else:
        await api(
            token, f"/sessions/{session_id}/resume", {"interrupt_id": approval["id"], "payload": {"status": "rejected"}}
        )
        decider = "client:agui-tests"
    before = await sync_to_async(snapshot)(session_id)

    forwarded = {"checkpointId": approval["metadata"]["checkpointId"]}
    entries = resume(approval, {"status": "approved" if door == "api" else "rejected"})
    run = well_formed(await agui("refund-approval", body(thread, resume=entries, forwarded=forwarded)))

    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == "checkpoint_decided"
    assert approval["id"] in run.last["message"] and decider in run.last["message"]
    assert await sync_to_async(snapshot)(session_id) == before
    assert submitted_refunds == []
    decided = [i for i in before["interrupts"] if i[1] == approval["id"]]
    assert [(status, label) for _, _, status, label, _ in decided] == [("resolved", decider)]
    if door == "inbox":  # the session is open: waiting on the confirmation the manager's approval led to
        assert before["session"][0] == "waiting"
        assert [i[2] for i in before["interrupts"] if i[1] != approval["id"]] == ["pending"]


async def test_the_thread_may_rewind_past_its_own_answers(agui, scripted):
    scripted("email-review", ["Draft one.", "Draft two.", "Draft three."])
    [first] = (await agui("email-review", body("t-rw-own", "Broken screen"))).interrupts
    [second] = (await agui("email-review", body("t-rw-own", resume=resume(first, "shorter")))).interrupts
    assert second["id"] != first["id"]

    forwarded = {"checkpointId": first["metadata"]["checkpointId"]}
    back = well_formed(
        await agui("email-review", body("t-rw-own", resume=resume(first, "more formal"), forwarded=forwarded))
    )

    [again] = back.interrupts
    assert again["id"] != second["id"] and "Draft three." in back.text_of_messages()


async def test_a_retried_rewind_is_left_alone_and_keeps_the_decisions_made_since(agui, scripted):
    """The client rewinds to the first draft with new feedback, then answers the draft that came of
    it; the rewind's request arrives again (a retry whose reply was lost, a late duplicate). It is
    this client's own decision sent again: left alone, as a retried answer is. Before, it rewound
    again: the later answer's draft was cancelled and a new one drafted from the old feedback."""
    from reviewconsole.inbox.models import Item

    scripted("email-review", ["D1.", "D2.", "D3.", "D4.", "D5.", "D6."])
    [a] = (await agui("email-review", body("t-rw-again", "Broken screen"))).interrupts
    await agui("email-review", body("t-rw-again", resume=resume(a, "shorter")))
    rewind = body("t-rw-again", resume=resume(a, "longer"), forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    [c] = well_formed(await agui("email-review", rewind)).interrupts
    again = well_formed(await agui("email-review", rewind))  # at once: the reply was lost
    assert again.last["type"] == "RUN_FINISHED" and [i["id"] for i in again.interrupts] == [c["id"]]
    [d] = well_formed(await agui("email-review", body("t-rw-again", resume=resume(c, "even shorter")))).interrupts
    late = well_formed(await agui("email-review", rewind))  # later still
    assert late.last["type"] == "RUN_FINISHED" and [i["id"] for i in late.interrupts] == [d["id"]]
    assert await Item.objects.filter(interrupt_id=d["id"], status="pending").aexists()
    assert not await Item.objects.filter(interrupt_id=c["id"], status="cancelled").aexists()


async def test_a_rewind_with_the_answer_first_given_there_asks_again(agui, scripted):
    """Not a retry: the client goes back to the first draft and gives the feedback it gave there
    the first time, to have that step made again. The pause was never rewound to: it rewinds."""
    scripted("email-review", ["D1.", "D2.", "D3."])
    [a] = (await agui("email-review", body("t-rw-same", "Broken screen"))).interrupts
    [b] = (await agui("email-review", body("t-rw-same", resume=resume(a, "shorter")))).interrupts
    forwarded = {"checkpointId": a["metadata"]["checkpointId"]}
    back = well_formed(await agui("email-review", body("t-rw-same", resume=resume(a, "shorter"), forwarded=forwarded)))
    [c] = back.interrupts
    assert c["id"] != b["id"] and "D3." in back.text_of_messages()


async def test_a_late_duplicate_of_an_older_rewind_keeps_the_newer_rewind_and_what_followed(agui, scripted):
    """The client rewinds to the first draft twice, with other feedback each time, and answers the
    draft the second rewind led to; then the first rewind's request arrives again (same ``runId``,
    a network duplicate). It changes nothing: the newest draft stays pending. Before, it was told
    apart from a new rewind only by its answers, which are no longer the stored ones: it rewound
    again and cancelled the draft, undoing the client's later answer."""
    from reviewconsole.inbox.models import Item

    scripted("email-review", ["D1.", "D2.", "D3.", "D4.", "D5.", "D6."])
    [a] = (await agui("email-review", body("t-rw-late", "Broken screen"))).interrupts
    await agui("email-review", body("t-rw-late", resume=resume(a, "shorter")))
    forwarded = {"checkpointId": a["metadata"]["checkpointId"]}
    first = body("t-rw-late", resume=resume(a, "longer"), forwarded=forwarded)
    session_id = well_formed(await agui("email-review", first)).of("CUSTOM", "status")[0]["value"]["sessionId"]
    [c] = well_formed(
        await agui("email-review", body("t-rw-late", resume=resume(a, "more formal"), forwarded=forwarded))
    ).interrupts
    [d] = well_formed(await agui("email-review", body("t-rw-late", resume=resume(c, "even shorter")))).interrupts

    late = well_formed(await agui("email-review", first))

    assert late.last["type"] == "RUN_FINISHED" and [i["id"] for i in late.interrupts] == [d["id"]]
    assert await Item.objects.filter(interrupt_id=d["id"], status="pending").aexists()
    assert await Item.objects.filter(session_id=session_id, status="pending").acount() == 1


async def test_a_run_id_used_again_for_another_rewind_rewinds(agui, scripted):
    """A client that reuses a ``runId`` for a different rewind (another answer) is asking for a new
    one (``../shared/cases/hitl-scenarios.md`` H34: a reused runId is a new run): it rewinds."""
    scripted("email-review", ["D1.", "D2.", "D3.", "D4."])
    [a] = (await agui("email-review", body("t-rw-reuse", "Broken screen"))).interrupts
    await agui("email-review", body("t-rw-reuse", resume=resume(a, "shorter")))
    forwarded = {"checkpointId": a["metadata"]["checkpointId"]}
    [c] = well_formed(
        await agui("email-review", body("t-rw-reuse", resume=resume(a, "longer"), forwarded=forwarded, run_id="r-1"))
    ).interrupts
    back = well_formed(
        await agui("email-review", body("t-rw-reuse", resume=resume(a, "formal"), forwarded=forwarded, run_id="r-1"))
    )
    [e] = back.interrupts
    assert e["id"] != c["id"] and "D4." in back.text_of_messages()


async def test_a_duplicate_rewind_without_answers_keeps_the_answer_given_after_it(agui, scripted):
    """A rewind with no ``resume`` (go back to the first draft and wait there) ends showing the
    reopened draft (before, it went back and then answered ``interrupts_pending``); answered in the
    next run, the rewind's request arrives again: nothing changes (before, it went back again and
    cancelled the draft the answer had led to)."""
    from reviewconsole.inbox.models import Item

    scripted("email-review", ["D1.", "D2.", "D3.", "D4."])
    [a] = (await agui("email-review", body("t-rw-bare", "Broken screen"))).interrupts
    await agui("email-review", body("t-rw-bare", resume=resume(a, "shorter")))
    rewind = body("t-rw-bare", forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    [reopened] = well_formed(await agui("email-review", rewind)).interrupts
    assert reopened["id"] == a["id"]
    [c] = well_formed(await agui("email-review", body("t-rw-bare", resume=resume(a, "longer")))).interrupts

    late = well_formed(await agui("email-review", rewind))

    assert late.last["type"] == "RUN_FINISHED" and [i["id"] for i in late.interrupts] == [c["id"]]
    assert await Item.objects.filter(interrupt_id=c["id"], status="pending").aexists()
