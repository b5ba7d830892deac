"""A rewind over AG-UI (``forwardedProps.checkpointId``) sent again, sent twice at once, or refused
(``reviewconsole/agui/rewinds.py``): a refused rewind changes nothing, the same rewind is made once,
and a message sent with one is kept or refused, never dropped. Each test failed before the claim
and the checks before the restore (a tester's attacks on the remembered rewind)."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from engine import FunctionCall, args_digest
from tests import call_binding
from tests.agui.conftest import body
from tests.agui.test_rewinds import snapshot
from tests.agui.test_runs import resume, well_formed

pytestmark = pytest.mark.django_db(transaction=True)

refunds = call_binding.refunds


def session_of(run):
    return run.of("CUSTOM", "status")[0]["value"]["sessionId"]


def statuses(session_id):
    from reviewconsole.inbox.models import Item

    return list(Item.objects.filter(session_id=session_id).order_by("id").values_list("interrupt_id", "status"))


async def two_drafts(agui, scripted, thread):
    """A thread whose first draft ``a`` was answered "shorter": (session id, a, b), ``b`` pending."""
    scripted("email-review", [f"D{n}." for n in range(1, 7)])
    first = well_formed(await agui("email-review", body(thread, "Broken screen")))
    [a] = first.interrupts
    [b] = well_formed(await agui("email-review", body(thread, resume=resume(a, "shorter")))).interrupts
    return session_of(first), a, b


@pytest.mark.parametrize(
    ("entries", "code"),
    [
        ("empty", "answer_missing"),
        ("object", "answer_invalid"),
        ("twice", "input_invalid"),
        ("unknown", "interrupt_unknown"),
        ("another", "interrupt_superseded"),
        ("cancel_and_unknown", "interrupt_unknown"),
    ],
)
async def test_a_refused_rewind_changes_nothing_and_is_judged_again(agui, scripted, entries, code):
    """Before, the session went back to the first draft and then the answers were refused: the
    client's answer there undone by a request it was told had failed (and an answer to the draft
    pending now, sent with the rewind, was dropped: the rewind cancels that draft)."""
    thread = f"t-rr-bad-{entries}"
    session_id, a, b = await two_drafts(agui, scripted, thread)
    bad = {
        "empty": resume(a, ""),
        "object": resume(a, {"not": "a string"}),
        "twice": resume(a, "longer") + resume(a, "shorter"),
        "unknown": [*resume(a, "longer"), {"interruptId": "nope", "status": "resolved", "payload": "x"}],
        "another": resume(a, "longer") + resume(b, "approve"),
        "cancel_and_unknown": [*resume(a, status="cancelled"), {"interruptId": "nope", "status": "resolved"}],
    }[entries]
    request = body(thread, resume=bad, forwarded={"checkpointId": a["metadata"]["checkpointId"]}, run_id="r-1")
    before = await sync_to_async(snapshot)(session_id)

    for _ in range(2):  # the same request again is refused again, not taken for a rewind made
        run = well_formed(await agui("email-review", request))
        assert (run.last["type"], run.last.get("code")) == ("RUN_ERROR", code)
        assert await sync_to_async(snapshot)(session_id) == before

    fixed = body(thread, resume=resume(a, "longer"), forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    [c] = well_formed(await agui("email-review", {**fixed, "runId": "r-1"})).interrupts
    assert c["id"] != b["id"]


async def test_an_unknown_checkpoint_is_refused_even_with_an_answer_given_before(agui, scripted):
    """Before, an answer the client had given at a rewound pause made the request look like a
    retry: the checkpoint was never looked up and the run ended as if rewound."""
    session_id, a, _ = await two_drafts(agui, scripted, "t-rr-unknown")
    forwarded = {"checkpointId": a["metadata"]["checkpointId"]}
    well_formed(await agui("email-review", body("t-rr-unknown", resume=resume(a, "longer"), forwarded=forwarded)))
    before = await sync_to_async(snapshot)(session_id)

    bad = body("t-rr-unknown", resume=resume(a, "longer"), forwarded={"checkpointId": "nope"})
    run = well_formed(await agui("email-review", bad))

    assert run.last.get("code") == "checkpoint_unknown"
    assert await sync_to_async(snapshot)(session_id) == before


async def test_a_rewind_to_the_pause_the_session_waits_at_is_not_made_again_later(agui, scripted):
    """A rewind without answers to where the session waits changes nothing, but it was made: sent
    again after the client answered there, it must not go back (before, only a rewind that
    restored was remembered, and the late copy cancelled the next draft)."""
    from reviewconsole.inbox.models import Item

    scripted("email-review", ["D1.", "D2.", "D3."])
    [a] = well_formed(await agui("email-review", body("t-rr-here", "Broken screen"))).interrupts
    rewind = body("t-rr-here", forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    assert [i["id"] for i in well_formed(await agui("email-review", rewind)).interrupts] == [a["id"]]
    [b] = well_formed(await agui("email-review", body("t-rr-here", resume=resume(a, "shorter")))).interrupts

    late = well_formed(await agui("email-review", rewind))

    assert late.last["type"] == "RUN_FINISHED" and [i["id"] for i in late.interrupts] == [b["id"]]
    assert await Item.objects.filter(interrupt_id=b["id"], status="pending").aexists()


async def test_a_new_message_with_a_rewind_the_workflow_rejects_is_refused_before_it(agui, scripted):
    session_id, a, _ = await two_drafts(agui, scripted, "t-rr-reject")
    before = await sync_to_async(snapshot)(session_id)
    request = body("t-rr-reject", "It is the battery", forwarded={"checkpointId": a["metadata"]["checkpointId"]})

    run = well_formed(await agui("email-review", request))

    assert run.last.get("code") == "interrupts_pending" and a["id"] in run.last["message"]
    assert await sync_to_async(snapshot)(session_id) == before


async def test_a_new_message_with_a_rewind_the_workflow_queues_is_kept(agui, scripted, on_arrival):
    """Before, the message was marked as taken and never queued: lost."""
    from reviewconsole.workflow_sessions.models import Arrival

    on_arrival("email-review", "queue")
    _, a, _ = await two_drafts(agui, scripted, "t-rr-queue")
    request = body("t-rr-queue", "It is the battery", forwarded={"checkpointId": a["metadata"]["checkpointId"]})

    run = well_formed(await agui("email-review", request))

    assert run.last["type"] == "RUN_FINISHED" and [i["id"] for i in run.interrupts] == [a["id"]]
    assert [s for s in await sync_to_async(lambda: list(Arrival.objects.values_list("status", flat=True)))()] == [
        "queued"
    ]


async def test_a_rewind_that_cancelled_sent_again_shows_the_cancelled_session(agui, scripted):
    session_id, a, _ = await two_drafts(agui, scripted, "t-rr-cancel")
    rewind = body(
        "t-rr-cancel", resume=resume(a, status="cancelled"), forwarded={"checkpointId": a["metadata"]["checkpointId"]}
    )
    assert well_formed(await agui("email-review", rewind)).last["outcome"]["type"] == "cancelled"
    before = await sync_to_async(snapshot)(session_id)

    again = well_formed(await agui("email-review", rewind))

    assert again.last["type"] == "RUN_FINISHED" and again.last["outcome"]["type"] == "cancelled"
    assert await sync_to_async(snapshot)(session_id) == before


async def test_two_copies_of_a_rewind_at_once_make_it_once(agui, scripted):
    """Before, the second copy hit the session held by the first and ended ``internal_error``."""
    from reviewconsole.workflow_sessions.models import Answer

    session_id, a, _ = await two_drafts(agui, scripted, "t-rr-twice")
    rewind = body("t-rr-twice", resume=resume(a, "longer"), forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    answers = await Answer.objects.filter(session_id=session_id).acount()

    runs = [well_formed(r) for r in await asyncio.gather(agui("email-review", rewind), agui("email-review", rewind))]

    assert {r.last.get("code") for r in runs} <= {None, "session_busy"}
    assert [s for _, s in await sync_to_async(statuses)(session_id)].count("pending") == 1
    assert await Answer.objects.filter(session_id=session_id).acount() == answers + 1


async def test_a_copy_arriving_while_the_first_is_being_made_is_busy_and_counts_nothing(agui, scripted, monkeypatch):
    """The first copy is held inside its restore; the second arrives then. Before, both restored
    and answered: the client's one decision stored twice. Now the second is ``session_busy``, and
    sent again once the first is done, it is left alone."""
    from reviewconsole.agui import rewinds
    from reviewconsole.workflow_sessions.models import Answer

    session_id, a, _ = await two_drafts(agui, scripted, "t-rr-race")
    rewind = body("t-rr-race", resume=resume(a, "longer"), forwarded={"checkpointId": a["metadata"]["checkpointId"]})
    answers = await Answer.objects.filter(session_id=session_id).acount()
    inside, go_on = asyncio.Event(), asyncio.Event()
    restore = rewinds.session_restore

    async def held(*args, **kwargs):
        inside.set()
        await go_on.wait()
        return await restore(*args, **kwargs)

    monkeypatch.setattr(rewinds, "session_restore", held)
    first = asyncio.ensure_future(agui("email-review", rewind))
    await inside.wait()
    second = well_formed(await agui("email-review", rewind))
    go_on.set()
    [c] = well_formed(await first).interrupts

    assert second.last.get("code") == "session_busy"
    later = well_formed(await agui("email-review", rewind))
    assert [i["id"] for i in later.interrupts] == [c["id"]]
    assert await Answer.objects.filter(session_id=session_id).acount() == answers + 1


async def refund_two_pauses(agui, scripted, thread):
    """A refund agent asking two confirmations: the first approved, the second pending.
    (session id, first, second)."""
    call = {"A-1": FunctionCall(name="submit_refund", args={"order_id": "A-1", "amount": 20.0})}
    second = FunctionCall(name="submit_refund", args={"order_id": "A-2", "amount": 30.0})
    scripted("refund-approval", [call["A-1"], second, "Done.", second, "Done."])
    first = well_formed(await agui("refund-approval", body(thread, json.dumps(call_binding.SMALL))))
    [c1] = first.interrupts
    ok = resume(c1, {"approved": True, "argsDigest": c1["metadata"]["argsDigest"]})
    [c2] = well_formed(await agui("refund-approval", body(thread, resume=ok))).interrupts
    return session_of(first), c1, c2


@pytest.mark.parametrize(("bad", "code"), [("digest", "args_changed"), ("edited", "answer_invalid")])
async def test_a_rewind_the_engine_refuses_as_it_stores_the_answer_goes_forward_again(
    agui, scripted, refunds, bad, code
):
    """An approval whose ``argsDigest`` or edited arguments only the engine refuses, as it stores
    the answer, after the rewind. Before, the session stayed rewound: the pending confirmation
    cancelled by a request the client was told had failed, and its answer to it then refused as
    superseded. Now the session goes forward to the pause it came from: the same confirmation
    waits (asked anew), and the client's answer to it goes through."""
    thread = f"t-rr-tool-{bad}"
    session_id, c1, c2 = await refund_two_pauses(agui, scripted, thread)
    record = await sync_to_async(lambda: snapshot(session_id)["session"])()
    payload = {
        "digest": {"approved": True, "argsDigest": args_digest("submit_refund", {"order_id": "A-1", "amount": 2e3})},
        "edited": {"approved": True, "argsDigest": c1["metadata"]["argsDigest"], "editedArgs": {"amount": "lots"}},
    }[bad]
    rewind = body(thread, resume=resume(c1, payload), forwarded={"checkpointId": c1["metadata"]["checkpointId"]})

    refused = well_formed(await agui("refund-approval", rewind))

    assert (refused.last["type"], refused.last.get("code")) == ("RUN_ERROR", code)
    after = await sync_to_async(lambda: snapshot(session_id)["session"])()
    assert (after[0], after[2]) == (record[0], record[2])  # waiting at the same pause
    assert [s for wire, s in await sync_to_async(statuses)(session_id) if s == "pending" and wire == c2["id"]]
    assert refunds == [{"order_id": "A-1", "amount": 20.0}]
    done = well_formed(
        await agui(
            "refund-approval",
            body(thread, resume=resume(c2, {"approved": True, "argsDigest": c2["metadata"]["argsDigest"]})),
        )
    )
    assert done.last["type"] == "RUN_FINISHED" and refunds[-1] == {"order_id": "A-2", "amount": 30.0}


async def test_a_new_message_sent_with_answers_is_left_for_the_next_run(agui, scripted, on_arrival):
    """Before, it was noted as taken and never used: the client could not send it again."""
    from reviewconsole.workflow_sessions.models import Arrival

    on_arrival("email-review", "queue")
    _, _, b = await two_drafts(agui, scripted, "t-rr-msg")
    request = body("t-rr-msg", "It is the battery", resume=resume(b, "shorter still"))
    [c] = well_formed(await agui("email-review", request)).interrupts

    again = body("t-rr-msg", "It is the battery", message_id=request["messages"][0]["id"])
    run = well_formed(await agui("email-review", again))

    assert run.last["type"] == "RUN_FINISHED" and [i["id"] for i in run.interrupts] == [c["id"]]
    assert await sync_to_async(lambda: list(Arrival.objects.values_list("status", flat=True)))() == ["queued"]
