"""The workflow's checks before a decision in AG-UI's ``resume``: RUN_ERROR ``decision_refused``
with the workflow's message, audited by the client, nothing stored; a passing answer goes through."""

from __future__ import annotations

import dataclasses

import pytest
from asgiref.sync import sync_to_async

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from reviewconsole.workflows import registry
from tests.agui.conftest import body
from tests.agui.test_request_kinds import VIP_TURNS
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)


def _reason_needed(attempt):
    return None if attempt.reason or attempt.decision != "reject" else "Say why you <decline>."


@pytest.fixture
def checked(monkeypatch):
    specs = registry.current().specs
    spec = dataclasses.replace(specs["vip-discount"], before_decision=(_reason_needed,))
    monkeypatch.setitem(specs, "vip-discount", spec)


async def test_a_refused_resume_is_a_run_error_with_the_workflows_message(agui, scripted, checked):
    scripted("vip-discount", VIP_TURNS)
    first = well_formed(await agui("vip-discount", body("t-check", '{"customer_id": "c123"}')))
    [interrupt] = first.interrupts
    refused = well_formed(await agui("vip-discount", body("t-check", resume=resume(interrupt, {"result": "no"}))))
    assert refused.last["type"] == "RUN_ERROR" and refused.last["code"] == "decision_refused"
    assert refused.last["message"] == "Say why you <decline>."
    item = await Item.objects.aget(interrupt_id=interrupt["id"])
    assert item.status == "pending"
    assert not await Answer.objects.filter(session_id=item.session_id).aexists()
    entry = await AuditEntry.objects.aget(action="interrupt.decide_refused")
    assert (entry.actor, entry.target_id, entry.detail["door"]) == ("agui:agui-tests", str(item.pk), "agui")

    answer = {"result": "reject", "reason": "Budget is spent"}
    passed = well_formed(await agui("vip-discount", body("t-check", resume=resume(interrupt, answer))))
    assert passed.last["type"] == "RUN_FINISHED"
    await sync_to_async(item.refresh_from_db)()
    assert (item.decision, item.reason) == ("reject", "Budget is spent")
