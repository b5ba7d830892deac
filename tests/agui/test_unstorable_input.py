"""AG-UI input holding what no database column can (NUL, unpaired surrogates, non-finite
numbers): RUN_ERROR ``input_invalid`` before anything is read or stored, never ``internal_error``."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from tests.agui.conftest import body

pytestmark = pytest.mark.django_db(transaction=True)


def _counts():
    from reviewconsole.agui.models import AguiThread
    from reviewconsole.workflow_sessions.models import Answer, WorkflowSession

    return AguiThread.objects.count(), WorkflowSession.objects.count(), Answer.objects.count()


@pytest.mark.parametrize(
    "data",
    [
        body("t-nul", "a\x00b"),  # the first message's text
        body("t-nul", json.dumps({"complaint": "a\u0000b"})),  # inside the message's JSON
        body("t-nul", '{"complaint": "x", "n": 1e400}'),
        body("t-nul\x00", "hello"),  # the thread id, looked up first
        body("t-nul", "hello", forwarded={"n": 1e400}),  # json.dumps writes Infinity
    ],
)
async def test_an_unstorable_value_ends_the_run_with_input_invalid(agui, scripted, data):
    scripted("email-review", ["A draft."])
    run = await agui("email-review", data)
    assert run.status == 200
    assert run.types == ["RUN_STARTED", "RUN_ERROR"]
    assert run.last["code"] == "input_invalid"
    assert "NUL character" in run.last["message"]
    assert await sync_to_async(_counts)() == (0, 0, 0)


RAW = json.dumps(body("t-sur", "My battery drains", run_id="r-sur"))


@pytest.mark.parametrize(
    ("raw", "ids"),
    [  # ``"\\ud800"`` is valid JSON; found by an attack: RUN_STARTED could not be encoded (internal_error)
        (RAW.replace('"t-sur"', '"t\\ud800"'), ("t\ud800", "r-sur")),  # the thread id
        (RAW.replace('"r-sur"', '"r\\udc00"'), ("t-sur", "r\udc00")),  # the run id
        (RAW.replace("My battery", "My \\ud83d battery"), ("t-sur", "r-sur")),  # half an emoji in the text
        (RAW.replace('"state": {}', '"state": {"k\\udfff": 1}'), ("t-sur", "r-sur")),  # a key
        (RAW.replace('"forwardedProps": {}', '"forwardedProps": {"x": ["\\ud800"]}'), ("t-sur", "r-sur")),
        (json.dumps(body("t-sur", '{"complaint": "a\\ud800b"}', run_id="r-sur")), ("t-sur", "r-sur")),  # in its JSON
    ],
)
async def test_an_unpaired_surrogate_ends_the_run_with_input_invalid(agui, scripted, raw, ids):
    """Refused as a NUL is; RUN_STARTED echoes the ids as sent (JSON-escaped)."""
    scripted("email-review", ["A draft."])
    run = await agui("email-review", None, raw=raw)
    assert run.status == 200, run.text
    assert run.types == ["RUN_STARTED", "RUN_ERROR"], run.events
    assert (run.events[0]["threadId"], run.events[0]["runId"]) == ids
    assert run.last["code"] == "input_invalid"
    assert "unpaired surrogate" in run.last["message"]
    assert await sync_to_async(_counts)() == (0, 0, 0)


async def test_a_resume_payload_out_of_range_is_refused_and_the_interrupt_stays(agui, scripted):
    scripted("email-review", ["A draft."])
    [interrupt] = (await agui("email-review", body("t-res", "My battery drains"))).interrupts
    entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"x": 1e400}}
    run = await agui("email-review", body("t-res", resume=[entry]))
    assert run.last["code"] == "input_invalid"
    assert (await sync_to_async(_counts)())[2] == 0
    retry = await agui("email-review", body("t-res", resume=[{**entry, "payload": "shorter"}]))
    assert retry.last["type"] in ("RUN_FINISHED", "RUN_ERROR") and retry.last.get("code") != "input_invalid"
