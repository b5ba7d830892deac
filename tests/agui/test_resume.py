"""A request's ``resume`` array: two entries for one interrupt are refused, and nothing changes."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from tests import call_binding
from tests.agui.conftest import body
from tests.agui.test_runs import well_formed

pytestmark = pytest.mark.django_db(transaction=True)

two_refunds, refunds = call_binding.two_refunds, call_binding.refunds


def rows(session_id):
    from reviewconsole.inbox.models import Item
    from reviewconsole.workflow_sessions.models import WorkflowSession

    session = WorkflowSession.objects.get(pk=session_id)
    interrupts = Item.objects.filter(session_id=session_id).order_by("id")
    return (
        (session.status, session.version, session.last_seq),
        list(interrupts.values_list("interrupt_id", "status", "decided_by_label")),
        session.answers.count(),
    )


@pytest.mark.parametrize("order", ["resolved-first", "cancelled-first"])
async def test_two_entries_for_one_interrupt_are_refused_and_change_nothing(agui, scripted, order):
    scripted("email-review", ["Draft one."])
    thread = f"t-dup-{order}"
    first = await agui("email-review", body(thread, "Broken screen"))
    [interrupt] = first.interrupts
    session_id = first.of("CUSTOM", "status")[0]["value"]["sessionId"]
    before = await sync_to_async(rows)(session_id)
    entries = [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": "approve"},
        {"interruptId": interrupt["id"], "status": "cancelled"},
    ]
    if order == "cancelled-first":
        entries.reverse()

    run = well_formed(await agui("email-review", body(thread, resume=entries)))

    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == "input_invalid"
    assert interrupt["id"] in run.last["message"]
    assert await sync_to_async(rows)(session_id) == before
    assert before[0][0] == "waiting" and before[1] == [(interrupt["id"], "pending", "")]


async def _paused_review(agui, scripted, thread):
    scripted("email-review", ["Draft one."])
    first = await agui("email-review", body(thread, "Broken screen"))
    [interrupt] = first.interrupts
    return first.of("CUSTOM", "status")[0]["value"]["sessionId"], interrupt


async def _lose_the_race(session_id, interrupt, winner, loser, *, loser_by="agui:agui-tests"):
    """Store ``winner`` as this client's answer, then apply ``loser`` as a concurrent request of
    the thread would: with the pending interrupts it read before the winner was stored."""
    import datetime as dt

    from ag_ui.core import ResumeEntry

    from reviewconsole.agui.resume import apply_resume
    from reviewconsole.workflow_sessions.services import pending_interrupts

    stale = await pending_interrupts(session_id)

    def entry(payload):
        return [ResumeEntry(interrupt_id=interrupt["id"], status="resolved", payload=payload)]

    now = dt.datetime.now(dt.UTC)
    won = await apply_resume(session_id, entry(winner), pending=stale, due={}, decided_by="agui:agui-tests", now=now)
    return won, await apply_resume(session_id, entry(loser), pending=stale, due={}, decided_by=loser_by, now=now)


async def test_an_answer_that_loses_a_race_to_another_answer_is_refused_naming_the_winner(agui, scripted):
    from reviewconsole.agui.errors import Refusal

    session_id, interrupt = await _paused_review(agui, scripted, "t-race-lost")
    with pytest.raises(Refusal) as refused:
        await _lose_the_race(session_id, interrupt, "approve", "reject")  # before: UNCHANGED, then told success

    assert refused.value.code == "interrupt_decided"
    assert f"Interrupt {interrupt['id']} was already approved by agui:agui-tests" in refused.value.message
    [stored] = (await sync_to_async(rows)(session_id))[1]
    assert stored[1:] == ("resolved", "agui:agui-tests")  # the winner's answer stands, once


async def test_the_same_answer_losing_a_race_to_itself_is_left_alone(agui, scripted):
    from reviewconsole.agui.resume import SUBMITTED, UNCHANGED

    session_id, interrupt = await _paused_review(agui, scripted, "t-race-same")
    assert await _lose_the_race(session_id, interrupt, "approve", "approve") == (SUBMITTED, UNCHANGED)
    assert (await sync_to_async(rows)(session_id))[2] == 1  # one answer stored


async def test_another_clients_same_answer_that_lost_is_refused(agui, scripted):
    from reviewconsole.agui.errors import Refusal

    session_id, interrupt = await _paused_review(agui, scripted, "t-race-other")
    with pytest.raises(Refusal) as refused:
        await _lose_the_race(session_id, interrupt, "approve", "approve", loser_by="agui:someone-else")
    assert refused.value.code == "interrupt_decided"


async def test_a_refused_lost_answer_is_audited(agui, scripted):
    from reviewconsole.agui.errors import Refusal
    from reviewconsole.audit.models import AuditEntry

    session_id, interrupt = await _paused_review(agui, scripted, "t-race-audit")
    with pytest.raises(Refusal):
        await _lose_the_race(session_id, interrupt, "approve", "reject")

    def refusals():
        return list(AuditEntry.objects.filter(action="interrupt.refuse").values_list("actor", "detail"))

    [(actor, detail)] = await sync_to_async(refusals)()
    assert actor == "agui:agui-tests" and detail["code"] == "interrupt_decided"


async def test_each_answer_of_a_request_that_lost_a_race_is_judged(agui, two_refunds, refunds):
    """Two confirmations: the same client's approvals are stored; a concurrent request of the
    thread (the pending list read before) approves the first again and refuses the second."""
    import datetime as dt
    import json

    from ag_ui.core import ResumeEntry

    from reviewconsole.agui.errors import Refusal
    from reviewconsole.agui.resume import apply_resume
    from reviewconsole.workflow_sessions.services import pending_interrupts
    from tests.call_binding import SMALL

    first = well_formed(await agui("refund-approval", body("t-race-two", json.dumps(SMALL))))
    a, b = first.interrupts
    session_id = first.of("CUSTOM", "status")[0]["value"]["sessionId"]
    stale = await pending_interrupts(session_id)

    def entries(second):
        return [
            ResumeEntry(interrupt_id=a["id"], status="resolved", payload={"approved": True}),
            ResumeEntry(interrupt_id=b["id"], status="resolved", payload={"approved": second}),
        ]

    now, by = dt.datetime.now(dt.UTC), "agui:agui-tests"
    await apply_resume(session_id, entries(True), pending=stale, due={}, decided_by=by, now=now)
    with pytest.raises(Refusal) as refused:  # before: the first entry's repeat made it all UNCHANGED
        await apply_resume(session_id, entries(False), pending=stale, due={}, decided_by=by, now=now)
    assert refused.value.code == "interrupt_decided" and b["id"] in refused.value.message


async def test_a_cancel_of_an_interrupt_a_reviewer_decided_is_refused(agui, scripted):
    from reviewconsole.inbox.items.decisions import interrupt_decide
    from reviewconsole.inbox.models import Item
    from tests.conftest import _user

    _, interrupt = await _paused_review(agui, scripted, "t-cancel-decided")

    def decide():
        item = Item.objects.get(interrupt_id=interrupt["id"], status="pending")
        interrupt_decide(interrupt=item, user=_user("manager"), action="approve")

    await sync_to_async(decide)()
    entries = [{"interruptId": interrupt["id"], "status": "cancelled"}]
    run = well_formed(await agui("email-review", body("t-cancel-decided", resume=entries)))
    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == "interrupt_decided"  # before: success
    assert "approved by manager" in run.last["message"]


async def test_a_cancel_racing_a_stored_decision_loses_and_the_decision_stands(agui, scripted):
    import datetime as dt

    from ag_ui.core import ResumeEntry

    from reviewconsole.agui.errors import Refusal
    from reviewconsole.agui.resume import apply_resume
    from reviewconsole.workflow_sessions.models import Answer, WorkflowSession
    from reviewconsole.workflow_sessions.services import interrupt_answer_sync, pending_interrupts

    session_id, interrupt = await _paused_review(agui, scripted, "t-cancel-race")
    stale = await pending_interrupts(session_id)  # read before the reviewer's answer is stored
    await sync_to_async(interrupt_answer_sync)(
        session_id, {interrupt["id"]: {"result": "approve"}}, decided_by="manager"
    )

    cancel = [ResumeEntry(interrupt_id=interrupt["id"], status="cancelled")]
    with pytest.raises(Refusal) as refused:  # before: the session was cancelled, the decision never applied
        await apply_resume(
            session_id, cancel, pending=stale, due={}, decided_by="agui:agui-tests", now=dt.datetime.now(dt.UTC)
        )
    assert refused.value.code == "interrupt_decided"

    def stands():
        return WorkflowSession.objects.get(pk=session_id).status, Answer.objects.filter(session_id=session_id).count()

    assert await sync_to_async(stands)() == ("waiting", 1)  # not cancelled; the answer waits for its run
