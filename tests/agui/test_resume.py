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
