"""One reading of an AG-UI ``resolved`` payload: recorded decision and workflow route agree.

Accepted shapes are stored normalised with their decision (``inbox.answers.read_answer``);
others end the run with RUN_ERROR ``answer_invalid`` and store nothing.
"""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Event
from tests.agui.conftest import body
from tests.agui.test_request_kinds import VIP_TURNS
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


async def _first_interrupt(agui, scripted, thread):
    scripted("email-review", ["Draft one.", "Draft two."])
    first = well_formed(await agui("email-review", body(thread, "My battery drains")))
    [interrupt] = first.interrupts
    return interrupt


async def test_a_rejection_with_a_reason_rejects_and_records_it(agui, scripted):
    interrupt = await _first_interrupt(agui, scripted, "t-ans-reject")
    payload = {"result": "reject", "reason": "bad tone"}
    done = well_formed(await agui("email-review", body("t-ans-reject", resume=resume(interrupt, payload))))
    assert "Draft rejected." in done.text_of_messages() and not done.interrupts
    row = await Item.objects.aget(interrupt_id=interrupt["id"])
    assert (row.decision, row.response, row.reason) == ("reject", "reject", "bad tone")


async def test_feedback_is_recorded_as_a_revision(agui, scripted):
    interrupt = await _first_interrupt(agui, scripted, "t-ans-revise")
    again = well_formed(await agui("email-review", body("t-ans-revise", resume=resume(interrupt, "shorter"))))
    assert again.interrupts
    row = await Item.objects.aget(interrupt_id=interrupt["id"])
    assert (row.decision, row.response) == ("revise", "shorter")


@pytest.mark.parametrize(
    "payload",
    [
        {"timeout": True},
        False,
        {"result": "approve", "draft": "  "},
        {"result": "approve", "note": "x"},
        {"result": "shorter " * 20_000, "x": 1},
    ],
)
async def test_another_shape_is_refused_and_nothing_stored(agui, scripted, payload):
    interrupt = await _first_interrupt(agui, scripted, "t-ans-bad")
    refused = well_formed(await agui("email-review", body("t-ans-bad", resume=resume(interrupt, payload))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "answer_invalid"
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()


@pytest.mark.parametrize("payload", [{"confirmed": False, "text": "yes"}, {"confirmed": True, "text": "no"}])
async def test_an_ambiguous_vip_answer_is_refused(agui, scripted, payload):
    scripted("vip-discount", VIP_TURNS)
    first = well_formed(await agui("vip-discount", body("t-ans-vip", '{"customer_id": "c123"}')))
    [interrupt] = first.interrupts
    refused = well_formed(await agui("vip-discount", body("t-ans-vip", resume=resume(interrupt, payload))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "answer_invalid"
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()


async def test_a_vip_no_declines_and_is_recorded_as_a_rejection(agui, scripted):
    scripted("vip-discount", VIP_TURNS)
    first = well_formed(await agui("vip-discount", body("t-ans-vip-no", '{"customer_id": "c123"}')))
    [interrupt] = first.interrupts
    well_formed(await agui("vip-discount", body("t-ans-vip-no", resume=resume(interrupt, {"confirmed": False}))))
    row = await Item.objects.aget(interrupt_id=interrupt["id"])
    assert (row.decision, row.response) == ("reject", "reject")
    events = [data async for data in Event.objects.filter(session_id=row.session_id).values_list("data", flat=True)]
    assert "5% off (VIP declined)" in str(events) and "20% off'" not in str(events)
