"""A request's ``resume`` array: two entries for one interrupt are refused, and nothing changes."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body
from tests.agui.test_runs import well_formed

pytestmark = pytest.mark.django_db(transaction=True)


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
