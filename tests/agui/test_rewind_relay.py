"""A rewind that reopens an interrupt, its ``interrupt.opened`` outbox row relayed later
(the process died after the rewind's commit): the outbox row holds no copy of what was asked (it
refers to the reopened ``Interrupt`` row), and the reopened item is asked as the first was."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.forms.models import model_to_dict

from reviewconsole.workflow_sessions import outbox
from tests.agui.conftest import body
from tests.agui.test_rewind_retries import session_of
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)

_ASKED = ("workflow", "title", "interrupt_id", "local_id", "kind", "function_name", "node_path", "branch")
_ASKED += ("message", "payload", "response_schema", "tool_call", "metadata", "queue", "on_expiry")


def _items(session_id):
    from reviewconsole.inbox.models import Item

    return list(Item.objects.filter(session_id=session_id).order_by("id"))


async def test_a_reopened_interrupt_relayed_after_a_crash_is_asked_as_before(agui, scripted, monkeypatch):
    thread = "t-rewind-relay"
    scripted("email-review", [f"D{n}." for n in range(1, 7)])
    first = well_formed(await agui("email-review", body(thread, "Broken screen")))
    [a] = first.interrupts
    well_formed(await agui("email-review", body(thread, resume=resume(a, "shorter"))))
    session_id = session_of(first)
    before = await sync_to_async(_items)(session_id)

    monkeypatch.setattr(outbox, "_relay_commit", lambda session_id, batch: None)  # died after each commit
    rewind = body(thread, forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    well_formed(await agui("email-review", rewind))
    monkeypatch.undo()
    assert await sync_to_async(outbox.relay)(session_id=session_id) >= 1  # the recovery sweep

    after = await sync_to_async(_items)(session_id)
    reopened = [i for i in after[len(before) :] if i.interrupt_id == a["id"]]
    assert len(reopened) == 1 and reopened[0].status == "pending"
    assert model_to_dict(reopened[0], fields=_ASKED) == model_to_dict(before[0], fields=_ASKED)
