"""AG-UI 1.0's ``status: "cancelled"`` resume: the run is abandoned (outcome ``cancelled``), the
session cancelled, and the inbox item says it was cancelled (not superseded), live."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


def _item_state(interrupt_id):
    from reviewconsole.inbox.models import Item, QueueChange

    row = Item.objects.get(interrupt_id=interrupt_id)
    events = list(QueueChange.objects.filter(item=row).order_by("id").values_list("event", flat=True))
    return row.status, row.decision, row.display_status, row.session.status, events, row.decided_by_label, row.reason


async def test_a_cancelled_resume_cancels_the_run_and_the_item_says_cancelled(agui, scripted):
    scripted("email-review", ["Draft one."])
    [interrupt] = (await agui("email-review", body("t-cancel", "Broken screen"))).interrupts

    run = well_formed(await agui("email-review", body("t-cancel", resume=resume(interrupt, status="cancelled"))))

    assert run.last["type"] == "RUN_FINISHED" and run.last["outcome"] == {"type": "cancelled"}
    status, decision, shown, session, events, by, reason = await sync_to_async(_item_state)(interrupt["id"])
    assert (status, decision, shown, session) == ("cancelled", "cancelled", "cancelled", "cancelled")
    assert (by, reason) == ("agui:agui-tests", "Cancelled by the AG-UI client.")
    assert events[-1] == "interrupt.cancelled"
    # Replaying the same cancel is harmless (AG-UI rule 5): the run ends cancelled again, nothing changes.
    again = well_formed(await agui("email-review", body("t-cancel", resume=resume(interrupt, status="cancelled"))))
    assert again.last["type"] in ("RUN_FINISHED", "RUN_ERROR")
    assert (await sync_to_async(_item_state)(interrupt["id"]))[4] == events
