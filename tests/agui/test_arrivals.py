"""A new message on an AG-UI thread whose session waits on a review: the workflow's
``on_arrival`` (reject: ``interrupts_pending``; queue: kept, fed once the review is decided;
supersede: the waiting session cancelled, the thread moved to a new one)."""

from __future__ import annotations

import pytest

from reviewconsole.agui.models import AguiThread
from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Arrival, WorkflowSession
from tests.agui.conftest import body
from tests.agui.test_request_kinds import VIP_TURNS
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def policy(on_arrival):
    return lambda name: on_arrival("vip-discount", name)


async def _waiting(agui, thread):
    first = well_formed(await agui("vip-discount", body(thread, '{"customer_id": "c123"}')))
    [interrupt] = first.interrupts
    return first.of("CUSTOM", "status")[0]["value"]["sessionId"], interrupt


async def test_reject_refuses_the_message_naming_the_session_and_interrupt(agui, scripted):
    scripted("vip-discount", VIP_TURNS)
    session_id, interrupt = await _waiting(agui, "t-arr-reject")
    refused = well_formed(await agui("vip-discount", body("t-arr-reject", '{"customer_id": "c123"}')))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "interrupts_pending"
    assert session_id in refused.last["message"] and interrupt["id"] in refused.last["message"]
    assert not await Arrival.objects.aexists()
    entry = await AuditEntry.objects.aget(action="session.arrival")
    assert (entry.actor, entry.target_id, entry.detail["outcome"]) == ("agui:agui-tests", session_id, "rejected")


async def test_queue_keeps_the_message_and_feeds_it_once_the_review_is_decided(agui, scripted, policy):
    policy("queue")
    scripted("vip-discount", VIP_TURNS + VIP_TURNS)
    session_id, interrupt = await _waiting(agui, "t-arr-queue")
    queued = well_formed(await agui("vip-discount", body("t-arr-queue", '{"customer_id": "c123"}')))
    assert queued.last["type"] == "RUN_FINISHED" and [i["id"] for i in queued.interrupts] == [interrupt["id"]]
    arrival = await Arrival.objects.aget()
    assert (arrival.session_id, arrival.target, arrival.status) == (session_id, "message", "queued")

    await agui("vip-discount", body("t-arr-queue", resume=resume(interrupt, {"result": "yes"})))
    arrival = await Arrival.objects.aget()
    assert arrival.status == "started" and arrival.started_session_id == session_id
    session = await WorkflowSession.objects.aget(pk=session_id)
    assert session.status == "waiting"  # the queued message's invocation asks again
    assert await Item.objects.filter(session_id=session_id, status="pending").acount() == 1


async def test_queue_refuses_a_message_that_does_not_fit_at_once_and_queues_nothing(agui, scripted, policy):
    """Found by the last session's review: a queued message was checked only when fed, after the
    review, so the client heard nothing of its mistake."""
    policy("queue")
    scripted("vip-discount", VIP_TURNS)
    session_id, _ = await _waiting(agui, "t-arr-bad")
    refused = well_formed(await agui("vip-discount", body("t-arr-bad", '{"customer": "c123"}')))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "input_invalid"
    assert refused.last["message"].startswith("The input does not fit the workflow: customer_id: ")
    assert not await Arrival.objects.aexists()
    assert not await AuditEntry.objects.filter(action="session.arrival").aexists()
    assert await Item.objects.filter(session_id=session_id, status="pending").acount() == 1


async def test_supersede_moves_the_thread_to_a_new_session_and_supersedes_the_item(agui, scripted, policy):
    policy("supersede")
    scripted("vip-discount", VIP_TURNS[:2] + VIP_TURNS)  # the first session never hears the reply
    old, interrupt = await _waiting(agui, "t-arr-super")
    newer = well_formed(await agui("vip-discount", body("t-arr-super", '{"customer_id": "c123"}')))
    assert newer.last["type"] == "RUN_FINISHED" and len(newer.interrupts) == 1
    thread = await AguiThread.objects.aget(thread_id="t-arr-super")
    assert thread.session_id != old
    assert (await WorkflowSession.objects.aget(pk=old)).status == "cancelled"
    old_item = await Item.objects.aget(interrupt_id=interrupt["id"], session_id=old)
    assert old_item.display_status == "superseded"
    # The thread's answer (same wire id: the VIP step asks under a fixed id) goes to the new session only.
    answered = well_formed(await agui("vip-discount", body("t-arr-super", resume=resume(interrupt, {"result": "yes"}))))
    assert answered.last["type"] == "RUN_FINISHED"
    assert (await Item.objects.aget(pk=old_item.pk)).status == "cancelled"
    assert (await Item.objects.aget(session_id=thread.session_id)).decision == "approve"


async def test_a_message_that_races_the_run_to_its_interrupt_is_refused_as_pending(agui, scripted, monkeypatch):
    """Concurrent first requests of one thread: a loser read the session before the winner's run
    paused, then stored its message after; that was a RUN_ERROR ``internal_error``."""
    from reviewconsole.agui import services

    scripted("vip-discount", VIP_TURNS)
    session_id, interrupt = await _waiting(agui, "t-arr-race")
    read = services.stream_continue

    def read_before_the_pause(session_id, after):
        events, state, _, _ = read(session_id, after)
        return events, state, [], {}

    monkeypatch.setattr(services, "stream_continue", read_before_the_pause)
    refused = well_formed(await agui("vip-discount", body("t-arr-race", '{"customer_id": "c123"}')))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "interrupts_pending"
    assert session_id in refused.last["message"] and interrupt["id"] in refused.last["message"]
    assert not await Arrival.objects.aexists()
