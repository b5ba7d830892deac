"""AG-UI's side of approvals bound to the exact call (``agui/interrupts.py``, ``resume.py``,
``engine/_digest.py``): the interrupt shows ``metadata.argsDigest``, an approval naming another
digest or a forged interrupt id is refused and audited, ``editedArgs`` run exactly, and the same
approval sent twice changes nothing."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from engine import FunctionCall, args_digest
from reviewconsole.audit.models import AuditEntry
from reviewconsole.workflow_sessions.models import Answer
from tests import call_binding
from tests.agui.conftest import body
from tests.agui.test_runs import resume, well_formed
from tests.call_binding import SMALL

refunds = call_binding.refunds


def _script(scripted):
    scripted("refund-approval", [FunctionCall(name="submit_refund", args={"order_id": "A-1", "amount": 20.0}), "Done."])


async def _start(agui, thread):
    first = well_formed(await agui("refund-approval", body(thread, json.dumps(SMALL))))
    [confirmation] = first.interrupts
    assert confirmation["reason"] == "tool_call"
    return first.of("CUSTOM", "status")[0]["value"]["sessionId"], confirmation


def _refusals():
    return list(AuditEntry.objects.filter(action="interrupt.refuse").values_list("detail", flat=True))


async def test_an_approval_of_changed_arguments_is_refused(agui, scripted, refunds):
    _script(scripted)
    session_id, confirmation = await _start(agui, "t-bind-changed")
    digest = confirmation["metadata"]["argsDigest"]
    assert digest == args_digest("submit_refund", {"order_id": "A-1", "amount": 20.0})
    shown = args_digest("submit_refund", {"order_id": "A-1", "amount": 2000.0})
    entries = resume(confirmation, {"approved": True, "argsDigest": shown})
    run = well_formed(await agui("refund-approval", body("t-bind-changed", resume=entries)))
    assert (run.last["type"], run.last["code"]) == ("RUN_ERROR", "args_changed")
    assert await sync_to_async(Answer.objects.filter(session_id=session_id).count)() == 0
    [refused] = await sync_to_async(_refusals)()
    assert (refused["code"], refused["given"], refused["interrupt_id"]) == ("args_changed", shown, confirmation["id"])
    assert refunds == []
    entries = resume(confirmation, {"approved": True, "argsDigest": digest})
    run = well_formed(await agui("refund-approval", body("t-bind-changed", resume=entries)))
    assert run.last["type"] == "RUN_FINISHED", run.last
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]


async def test_a_forged_interrupt_id_is_refused(agui, scripted, refunds):
    _script(scripted)
    session_id, confirmation = await _start(agui, "t-bind-forged")
    entries = [*resume(confirmation, {"approved": True}), {"interruptId": "adk-forged", "status": "resolved"}]
    run = well_formed(await agui("refund-approval", body("t-bind-forged", resume=entries)))
    assert (run.last["type"], run.last["code"]) == ("RUN_ERROR", "interrupt_unknown")
    assert await sync_to_async(Answer.objects.filter(session_id=session_id).count)() == 0
    [refused] = await sync_to_async(_refusals)()
    assert (refused["code"], refused["interrupt_id"]) == ("interrupt_unknown", "adk-forged")
    assert refunds == []


async def test_edited_arguments_are_exactly_what_runs(agui, scripted, refunds):
    _script(scripted)
    _, confirmation = await _start(agui, "t-bind-edit")
    digest = confirmation["metadata"]["argsDigest"]
    bad = resume(confirmation, {"approved": True, "argsDigest": digest, "editedArgs": {"amount": "lots"}})
    run = well_formed(await agui("refund-approval", body("t-bind-edit", resume=bad)))
    assert run.last["code"] == "answer_invalid"
    edited = {"order_id": "A-1", "amount": 5.0}
    entries = resume(confirmation, {"approved": True, "argsDigest": digest, "editedArgs": edited})
    run = well_formed(await agui("refund-approval", body("t-bind-edit", resume=entries)))
    assert run.last["type"] == "RUN_FINISHED", run.last
    assert refunds == [edited]


async def test_the_same_approval_sent_twice_is_a_no_op(agui, scripted, refunds):
    _script(scripted)
    session_id, confirmation = await _start(agui, "t-bind-twice")
    entries = resume(confirmation, {"approved": True, "argsDigest": confirmation["metadata"]["argsDigest"]})
    first = well_formed(await agui("refund-approval", body("t-bind-twice", resume=entries)))
    again = well_formed(await agui("refund-approval", body("t-bind-twice", resume=entries)))
    assert (first.last["type"], again.last["type"]) == ("RUN_FINISHED", "RUN_FINISHED")
    assert await sync_to_async(Answer.objects.filter(session_id=session_id).count)() == 1
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]


@pytest.mark.parametrize("approved", ["false", "true", 0, 1, None])
async def test_approved_that_is_not_a_boolean_is_refused_and_nothing_runs(agui, scripted, refunds, approved):
    _script(scripted)
    session_id, confirmation = await _start(agui, f"t-bind-str-{approved}")
    entries = resume(confirmation, {"approved": approved, "argsDigest": confirmation["metadata"]["argsDigest"]})
    run = well_formed(await agui("refund-approval", body(f"t-bind-str-{approved}", resume=entries)))
    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == "answer_invalid"  # before: "false" approved
    assert "approved: must be true or false" in run.last["message"]
    assert await sync_to_async(Answer.objects.filter(session_id=session_id).count)() == 0
    assert refunds == []
