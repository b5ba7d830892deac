"""AG-UI refusals of answers (issue 13): an empty free-text answer is ``answer_missing``; an entry
for an interrupt not open yet while an earlier answer waits to be applied is
``interrupt_not_ready`` (retryable), not ``interrupt_unknown``."""

from __future__ import annotations

import pytest

from reviewconsole.agui.models import AguiThread
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.runners import runner_for
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("payload", ["   ", {"result": None}])
async def test_an_empty_free_text_answer_is_answer_missing(agui, scripted, payload):
    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-empty", '{"complaint": "Late parcel"}')))
    [interrupt] = first.interrupts
    refused = well_formed(await agui("email-review", body("t-empty", resume=resume(interrupt, payload))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "answer_missing"
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()


async def test_an_answer_for_the_next_interrupt_while_one_waits_is_not_ready(agui, scripted):
    scripted("email-review", ["Draft one.", "Draft two."])
    first = well_formed(await agui("email-review", body("t-early", '{"complaint": "Late parcel"}')))
    [interrupt] = first.interrupts
    thread = await AguiThread.objects.aget(thread_id="t-early")
    # An answer stored elsewhere (the inbox, the API) whose run has not been taken yet.
    await runner_for("email-review").submit(thread.session_id, {interrupt["id"]: "shorter"})
    early = await agui(
        "email-review",
        body("t-early", resume=[{"interruptId": "next-draft", "status": "resolved", "payload": "approve"}]),
    )
    assert early.last["type"] == "RUN_ERROR" and early.last["code"] == "interrupt_not_ready"


async def test_an_answer_to_a_superseded_draft_is_interrupt_superseded(agui, scripted):
    scripted("email-review", ["Draft one.", "Draft two."])
    first = well_formed(await agui("email-review", body("t-old", '{"complaint": "Late parcel"}')))
    [old] = first.interrupts
    second = well_formed(await agui("email-review", body("t-old", resume=resume(old, "shorter"))))
    [newer] = second.interrupts
    refused = well_formed(await agui("email-review", body("t-old", resume=resume(old, "approve"))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "interrupt_superseded"
    assert newer["id"] in refused.last["message"] and "superseded: a newer request exists" in refused.last["message"]


async def test_feedback_over_its_maximum_is_answer_too_long(agui, scripted):
    from reviewconsole.inbox.items.actions import MAX_LENGTHS

    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-long", '{"complaint": "Late parcel"}')))
    [interrupt] = first.interrupts
    long = "x" * (MAX_LENGTHS["feedback"] + 1)
    refused = well_formed(await agui("email-review", body("t-long", resume=resume(interrupt, long))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "answer_too_long"


async def test_an_answer_to_a_claimed_interrupt_is_interrupt_claimed(agui, scripted):
    from asgiref.sync import sync_to_async

    from reviewconsole.inbox.items.claims import interrupt_claim
    from tests.personas import persona_user

    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-claimed", '{"complaint": "Late parcel"}')))
    [interrupt] = first.interrupts
    row = await Item.objects.aget(interrupt_id=interrupt["id"])
    admin = await sync_to_async(persona_user)("admin")
    await sync_to_async(interrupt_claim)(interrupt=row, user=admin)
    refused = well_formed(await agui("email-review", body("t-claimed", resume=resume(interrupt, "approve"))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "interrupt_claimed"
    assert await Item.objects.filter(pk=row.pk, status="pending").aexists()


async def test_feedback_beside_an_approval_is_decision_ambiguous(agui, scripted):
    scripted("email-review", ["Draft one."])
    first = well_formed(await agui("email-review", body("t-both", '{"complaint": "Late parcel"}')))
    [interrupt] = first.interrupts
    payload = {"result": "approve", "feedback": "mention the refund"}
    refused = well_formed(await agui("email-review", body("t-both", resume=resume(interrupt, payload))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "decision_ambiguous"
    assert "'feedback' and 'result'" in refused.last["message"]
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()


async def test_a_form_answer_out_of_its_format_is_answer_invalid_naming_the_field(agui):
    start = body("t-format", '{"title": "Checkout down", "details": "502s"}')
    first = well_formed(await agui("incident-triage", start))
    [interrupt] = first.interrupts
    triage = {"severity": "high", "summary": "Card payments fail", "affected_customers": 3}
    bad = {**triage, "contact": {"name": "Dana", "email": "dana at example"}}
    refused = well_formed(await agui("incident-triage", body("t-format", resume=resume(interrupt, bad))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "answer_invalid"
    assert refused.last["message"] == (
        "The answer does not fit the interrupt's response schema:"
        " contact.email: not an email address, e.g. name@example.com."
    )
    assert await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()
    good = {**triage, "contact": {"name": "Dana", "email": "dana@example.com"}}
    answered = well_formed(await agui("incident-triage", body("t-format", resume=resume(interrupt, good))))
    assert answered.last["type"] == "RUN_FINISHED"
    assert not await Item.objects.filter(interrupt_id=interrupt["id"], status="pending").aexists()
