"""The AG-UI door: event mapping for every sample workflow, one world with the inbox, every refusal."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from engine import FunctionCall
from tests.agui.conftest import body

pytestmark = pytest.mark.django_db(transaction=True)


def well_formed(run):
    """What the reference client checks, in short: RUN_STARTED first, one terminal event last, pairs closed."""
    assert run.status == 200
    assert run.headers["Content-Type"].startswith("text/event-stream")
    assert run.headers["X-Accel-Buffering"] == "no" and run.headers["Cache-Control"] == "no-cache"
    assert "\r" not in run.text and all(f.startswith("data: ") for f in run.frames)
    assert run.types[0] == "RUN_STARTED" and run.events[0]["protocolVersion"] == "1.0"
    assert run.types[-1] in ("RUN_FINISHED", "RUN_ERROR")
    assert sum(t in ("RUN_FINISHED", "RUN_ERROR") for t in run.types) == 1
    for e in run.events:  # no null for an absent optional field (data inside values may hold nulls)
        assert None not in [v for k, v in e.items() if k != "value"], e
        for interrupt in (e.get("outcome") or {}).get("interrupts", []):
            assert None not in interrupt.values(), interrupt
    opened = {}
    for e in run.events:
        for kind, key in (("STEP", "stepName"), ("TEXT_MESSAGE", "messageId"), ("TOOL_CALL", "toolCallId")):
            if e["type"] in (f"{kind}_START", f"{kind}_STARTED"):
                assert (kind, e[key]) not in opened
                opened[(kind, e[key])] = True
            elif e["type"] in (f"{kind}_END", f"{kind}_FINISHED"):
                assert opened.pop((kind, e[key]))
    assert not opened, opened
    return run


def resume(interrupt, payload=None, status="resolved"):
    entry = {"interruptId": interrupt["id"], "status": status}
    if payload is not None:
        entry["payload"] = payload
    return [entry]


async def test_email_review_streams_steps_text_state_and_two_interrupts(agui, scripted):
    model = scripted("email-review", ["Draft one, about the battery.", "Draft two, shorter."])
    first = well_formed(await agui("email-review", body("t-mail", "My battery drains")))
    steps = [e["stepName"] for e in first.of("STEP_STARTED")]
    assert steps[:3] == ["email_review@1", "email_review@1/process_input@1", "email_review@1/draft_email@1"]
    assert "".join(first.text_of_messages()) == "Draft one, about the battery."
    assert len(first.of("TEXT_MESSAGE_CONTENT")) == 5  # word by word
    assert first.of("STATE_SNAPSHOT") and first.of("STATE_DELTA")
    assert any(op["path"] == "/draft" for e in first.of("STATE_DELTA") for op in e["delta"])
    [interrupt] = first.interrupts
    assert interrupt["reason"] == "input_required" and interrupt["responseSchema"] == {"type": "string"}
    assert interrupt["metadata"]["checkpointId"] and interrupt["expiresAt"].endswith("Z")
    assert [e["value"]["id"] for e in first.of("CUSTOM", "request_info")] == [interrupt["id"]]
    second = well_formed(await agui("email-review", body("t-mail", resume=resume(interrupt, "shorter"))))
    [again] = second.interrupts
    assert again["id"] != interrupt["id"] and "Draft two" in "".join(second.text_of_messages())
    assert "shorter" in model.requests[1].instruction
    done = well_formed(await agui("email-review", body("t-mail", resume=resume(again, "approve"))))
    assert done.last["outcome"] == {"type": "success"}
    assert "Draft approved and sent successfully." in done.text_of_messages()
    assert done.of("CUSTOM", "workflow_output") and done.of("CUSTOM", "status")[-1]["value"]["status"] == "completed"


async def test_vip_discount_maps_node_tools_and_a_rerun_interrupt(agui, scripted):
    scripted(
        "vip-discount",
        [
            FunctionCall(name="customer_lookup_workflow", args={"user_id": "c123"}),
            FunctionCall(name="calculate_discount", args={"tier": "Verified VIP Member", "user_id": "c123"}),
            "Ada gets 20% off.",
        ],
    )
    first = well_formed(await agui("vip-discount", body("t-vip", '{"customer_id": "c123"}')))
    names = [e["toolCallName"] for e in first.of("TOOL_CALL_START")]
    assert names == ["customer_lookup_workflow", "calculate_discount"]
    lookup_id = first.of("TOOL_CALL_START")[0]["toolCallId"]
    assert [e["toolCallId"] for e in first.of("TOOL_CALL_RESULT")] == [lookup_id]
    assert f"customer_service_agent@1/customer_lookup_workflow@{lookup_id}" in [
        e["stepName"] for e in first.of("STEP_STARTED")
    ]
    [interrupt] = first.interrupts
    assert interrupt["id"] == "confirm_vip_discount" and interrupt["metadata"]["payload"]["proposed_discount"] == "20%"
    done = well_formed(await agui("vip-discount", body("t-vip", resume=resume(interrupt, "yes"))))
    assert done.of("TOOL_CALL_RESULT")[0]["content"] == '{"result": "20% off"}'
    assert done.last["result"] == "Ada gets 20% off."


async def test_refund_approval_long_running_then_tool_call_interrupts(agui, scripted):
    args = {"order_id": "o-9", "amount": 150.0, "reason": "late"}
    scripted(
        "refund-approval",
        [
            FunctionCall(name="ask_for_approval", args=args),
            "Waiting for a manager.",
            FunctionCall(name="submit_refund", args={"order_id": "o-9", "amount": 150.0}),
            "Refund submitted.",
        ],
    )
    first = well_formed(
        await agui("refund-approval", body("t-ref", '{"order_id": "o-9", "amount": 150, "reason": "late"}'))
    )
    [waiting] = first.interrupts
    assert waiting["reason"] == "reviewconsole:long_running" and waiting["toolCallId"] == waiting["id"]
    second = well_formed(await agui("refund-approval", body("t-ref", resume=resume(waiting, {"status": "approved"}))))
    late = [e for e in second.of("TOOL_CALL_RESULT") if e["toolCallId"] == waiting["id"]]
    assert late and '"approved"' in late[0]["content"]
    [approval] = second.interrupts
    assert approval["reason"] == "tool_call" and approval["responseSchema"]["title"] == "ToolConfirmation"
    assert not [e for e in second.of("TOOL_CALL_RESULT") if e["toolCallId"] == approval["toolCallId"]]
    done = well_formed(await agui("refund-approval", body("t-ref", resume=resume(approval, {"approved": True}))))
    assert [e["toolCallId"] for e in done.of("TOOL_CALL_RESULT")] == [approval["toolCallId"]]
    assert not done.of("TOOL_CALL_START")


async def test_support_handoff_one_step_per_turn_and_approvals(agui, scripted):
    def transfer(name):
        return FunctionCall(name="transfer_to_agent", args={"agent_name": name})

    scripted(
        "support-handoff",
        [
            transfer("refunds_agent"),
            FunctionCall(name="submit_refund", args={"order_id": "o-1001", "amount": 249.0}),
            transfer("order_agent"),
            transfer("triage_agent"),
            "All sorted. Case complete.",
        ],
    )
    first = well_formed(await agui("support-handoff", body("t-sup", "Refund o-1001 please")))
    steps = [e["stepName"] for e in first.of("STEP_STARTED")]
    assert steps == ["support@1", "support@1/triage_agent@1", "support@1/refunds_agent@1"]
    assert [e["toolCallName"] for e in first.of("TOOL_CALL_START")] == ["transfer_to_agent", "submit_refund"]
    [approval] = first.interrupts
    assert approval["reason"] == "tool_call"
    done = well_formed(await agui("support-handoff", body("t-sup", resume=resume(approval, {"approved": True}))))
    steps = [e["stepName"] for e in done.of("STEP_STARTED")]
    assert steps == ["support@1", "support@1/refunds_agent@1", "support@1/order_agent@1", "support@1/triage_agent@2"]
    assert done.last["result"] == "All sorted. Case complete."


async def test_forwarded_props_reach_the_context_and_never_the_prompt(agui, scripted):
    model = scripted("email-review", ["A draft."])
    run = await agui("email-review", body("t-fp", "Hello", forwarded={"tenant": "secret-tenant-42"}))
    well_formed(run)
    request = model.requests[0]
    seen = request.instruction + "".join(c.text for c in request.contents) + str(request.tools)
    assert "secret-tenant-42" not in seen


async def test_an_inbox_decision_resumes_the_thread_and_the_client_catches_up(agui, scripted):
    from asgiref.sync import sync_to_async

    from reviewconsole.inbox.items.decisions import interrupt_decide
    from reviewconsole.inbox.models import Item
    from tests.conftest import _user

    scripted("email-review", ["Draft one."])
    first = await agui("email-review", body("t-one", "Broken screen"))
    [interrupt] = first.interrupts

    def decide():
        item = Item.objects.get(interrupt_id=interrupt["id"], status="pending")
        interrupt_decide(interrupt=item, user=_user("manager"), action="approve")

    await sync_to_async(decide)()
    lost = well_formed(await agui("email-review", body("t-one", resume=resume(interrupt, "reject"))))
    assert lost.last["type"] == "RUN_ERROR" and lost.last["code"] == "interrupt_decided"  # not told success
    assert "approved by manager" in lost.last["message"]
    later = well_formed(await agui("email-review", body("t-one")))  # a catch-up: no message, no resume
    assert later.last["outcome"] == {"type": "success"}
    assert "Draft approved and sent successfully." in later.text_of_messages()  # the reviewer won


async def test_an_answer_through_agui_resolves_the_inbox_item(agui, scripted):
    from asgiref.sync import sync_to_async

    from reviewconsole.inbox.models import Item

    scripted("email-review", ["Draft one."])
    first = await agui("email-review", body("t-two", "Broken screen"))
    [interrupt] = first.interrupts
    await agui("email-review", body("t-two", resume=resume(interrupt, "approve")))
    row = await sync_to_async(Item.objects.get)(interrupt_id=interrupt["id"])
    assert (row.status, row.decided_by_label) == ("resolved", "agui:agui-tests")


@pytest.mark.parametrize(
    ("entries", "code"),
    [
        (lambda i: [], "interrupts_pending"),
        (lambda i: [{"interruptId": "nope", "status": "resolved", "payload": "x"}], "resume_incomplete"),
        (
            lambda i: [*resume(i, "approve"), {"interruptId": "nope", "status": "resolved", "payload": "x"}],
            "interrupt_unknown",
        ),
        (lambda i: resume(i), "answer_invalid"),
    ],
)
async def test_resume_refusals_store_nothing(agui, scripted, entries, code):
    scripted("email-review", ["Draft one."])
    first = await agui("email-review", body("t-ref-" + code, "Broken screen"))
    [interrupt] = first.interrupts
    run = well_formed(await agui("email-review", body("t-ref-" + code, "more", resume=entries(interrupt) or None)))
    assert run.last["type"] == "RUN_ERROR" and run.last["code"] == code
    assert "Error" not in run.last["message"] and "Traceback" not in run.text


async def test_an_expired_interrupt_is_refused_and_cancelling_it_is_not(agui, scripted):
    from asgiref.sync import sync_to_async

    from reviewconsole.inbox.models import Item

    scripted("email-review", ["Draft one."])
    [interrupt] = (await agui("email-review", body("t-exp", "Broken"))).interrupts
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    await sync_to_async(Item.objects.filter(interrupt_id=interrupt["id"]).update)(due_at=past)
    refused = await agui("email-review", body("t-exp", resume=resume(interrupt, "approve")))
    assert refused.last["code"] == "interrupt_expired"
    cancelled = well_formed(await agui("email-review", body("t-exp", resume=resume(interrupt, status="cancelled"))))
    assert cancelled.last["outcome"] == {"type": "cancelled"}


async def test_checkpoint_of_another_thread_is_unknown(agui, scripted):
    scripted("email-review", ["A.", "B."])
    [mine] = (await agui("email-review", body("t-c1", "one"))).interrupts
    [theirs] = (await agui("email-review", body("t-c2", "two"))).interrupts
    forwarded = {"checkpointId": theirs["metadata"]["checkpointId"]}
    run = await agui("email-review", body("t-c1", resume=resume(mine, "approve"), forwarded=forwarded))
    assert run.last["code"] == "checkpoint_unknown"


async def test_http_refusals(agui, token):
    assert (await agui("email-review", body("t", "x"), auth=None)).status == 401
    assert (await agui("email-review", body("t", "x"), auth="rc_wrong")).status == 401
    assert (await agui("no-such-flow", body("t", "x"))).status == 404
    assert (await agui("email-review", None, raw="{not json")).status == 400
    assert (await agui("email-review", None, raw='{"threadId": "t"}')).status == 400
    assert (await agui("vip-discount", body("t-bad", "not json"))).last["code"] == "input_invalid"
    assert (await agui("email-review", body("t-empty"))).last["code"] == "input_missing"


@pytest.mark.parametrize("where", ["body", "state"])
async def test_a_body_nested_too_deeply_to_parse_is_a_400(agui, where):
    deep = "[" * 50_000 + "]" * 50_000
    raw = (
        deep if where == "body" else json.dumps(body("t-deep", "x")).replace('"state": {}', f'"state": {{"x": {deep}}}')
    )
    run = await agui("email-review", None, raw=raw)
    assert run.status == 400
    assert json.loads(run.text) == {
        "error": {"code": "invalid_input", "message": "The body is nested too deeply to be an AG-UI RunAgentInput."}
    }


async def test_a_retried_answer_the_session_moved_past_is_left_alone(agui, scripted):
    """The client sends its revise again (it never got the reply): the answer was applied and the
    next draft waits. The retry is not told "superseded" (its decision was not replaced, it was
    applied); it is left alone, as the API's repeat is, and shows the next draft's interrupt."""
    from asgiref.sync import sync_to_async

    from reviewconsole.workflow_sessions.models import Answer

    scripted("email-review", ["Draft one.", "Draft two."])
    first = well_formed(await agui("email-review", body("t-retry", "Broken screen")))
    [interrupt] = first.interrupts
    second = well_formed(await agui("email-review", body("t-retry", resume=resume(interrupt, "shorter"))))
    [after] = second.interrupts
    retried = well_formed(await agui("email-review", body("t-retry", resume=resume(interrupt, "shorter"))))
    assert retried.last["type"] == "RUN_FINISHED", retried.last
    assert [i["id"] for i in retried.interrupts] == [after["id"]]  # the next draft waits, as before
    assert await sync_to_async(Answer.objects.filter(interrupt_id=interrupt["id"]).count)() == 1
    other = well_formed(await agui("email-review", body("t-retry", resume=resume(interrupt, "reject"))))
    assert other.last["type"] == "RUN_ERROR" and other.last["code"] == "interrupt_superseded"
