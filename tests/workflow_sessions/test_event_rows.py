"""An event row stores its JSON without what its columns hold, and every reader gets the whole JSON back."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

import engine
from engine import Event, FunctionCall, NodeInfo
from reviewconsole.agui.services import stored_events
from reviewconsole.workflow_sessions import store_sql
from reviewconsole.workflow_sessions.event_rows import TEXT_STATE, stored_data
from reviewconsole.workflow_sessions.export import session_export
from reviewconsole.workflow_sessions.models import Event as EventRow
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.serializers import session_json
from reviewconsole.workflow_sessions.store import OrmStore
from reviewconsole.workflow_sessions.store_rows import append_events

pytestmark = pytest.mark.django_db


def _events() -> list[Event]:
    call = FunctionCall(id="call-1", name="adk_request_input", args={"message": "Draft?"})
    return [
        Event(invocation_id="inv-1", author="user", message="Order #1 arrived late."),
        Event(
            invocation_id="inv-1",
            author="email_review",
            node_info=NodeInfo(path="email_review@1/process_input@1"),
            state={"complaint": "late"},
            route="revise",
        ),
        Event(
            invocation_id="inv-1",
            author="email_review",
            node_info=NodeInfo(path="email_review@1/ask@1"),
            content=engine.Content(role="model", parts=[engine.Part(function_call=call)]),
            long_running_tool_ids=["call-1"],
        ),
        Event(
            invocation_id="inv-1",
            author="tool",
            branch="agent@1/tool@call-1",
            node_info=NodeInfo(path="agent@1/tool@1", output_for=["agent@1"]),
            output={"ok": True},
            custom_metadata={"note": "x"},
        ),
        Event(invocation_id="", author="agent", branch="", node_info=NodeInfo(path="a@1"), error_code="E"),
        Event(  # an agent's output_key: the delta's value is the event's text
            invocation_id="inv-1",
            author="draft_email",
            node_info=NodeInfo(path="email_review@1/draft_email@1", output_for=["email_review@1/draft_email@1"]),
            content=engine.Content(role="model", parts=[engine.Part(text="Dear "), engine.Part(text="customer")]),
            state={"draft": "Dear customer"},
            route="ask",
        ),
        Event(author="draft_email", message="Dear customer", state={"draft": "Dear customer", "tries": 1}),
    ]


def _stored(events: list[Event]) -> WorkflowSession:
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test")
    append_events(row, events)
    row.save()
    return row


def test_the_data_holds_only_what_the_columns_do_not():
    row = _stored(_events())
    for data in EventRow.objects.filter(session=row).values_list("data", flat=True):
        assert not {"id", "invocationId", "author", "timestamp"} & set(data)
        assert "path" not in (data.get("nodeInfo") or {})
    tool = EventRow.objects.get(session=row, author="tool")
    assert "branch" not in tool.data and tool.branch == "agent@1/tool@call-1"
    assert tool.data["nodeInfo"] == {"outputFor": ["agent@1"]}
    drafted, other = EventRow.objects.filter(session=row, author="draft_email").order_by("seq")
    assert drafted.data["actions"] == {"route": "ask"} and drafted.data[TEXT_STATE] == ["draft"]
    assert json.dumps(drafted.data).count("Dear") == 1  # the draft is stored once
    assert other.data["actions"]["stateDelta"] == {"draft": "Dear customer", "tries": 1}  # not all the text
    assert TEXT_STATE not in other.data


def test_every_reader_gets_the_json_the_engine_wrote_key_order_included():
    events = _events()
    row = _stored(events)
    written = [json.dumps(event.to_json()) for event in events]
    assert [json.dumps(e) for e in session_export(row)["events"]] == written
    assert [json.dumps(e) for e in session_json(row)["events"]] == written
    assert [json.dumps(e.adk_json()) for e in EventRow.objects.filter(session=row).order_by("seq")] == written
    listed = async_to_sync(OrmStore().list_events)(row.id)
    assert [json.dumps(e.to_json()) for e in listed] == written
    assert EventRow.objects.get(session=row, seq=6).adk_json()["actions"] == {
        "stateDelta": {"draft": "Dear customer"},
        "route": "ask",
    }
    streamed, last = stored_events(row.id, 0, known={events[0].id})
    assert [e.to_json() for e in streamed] == [e.to_json() for e in events[1:]] and last == len(events)


def test_the_plain_sql_insert_stores_the_same_form():
    events = _events()
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test", last_seq=len(events))
    store_sql.insert_events(row.id, events, len(events))
    assert list(EventRow.objects.filter(session=row).order_by("seq").values_list("data", flat=True)) == [
        stored_data(e) for e in events
    ]
    assert session_export(row)["events"] == [e.to_json() for e in events]


def test_a_row_written_whole_before_reads_as_it_is():
    event = _events()[3]
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test", last_seq=1)
    whole = event.to_json()
    EventRow.objects.create(
        session=row,
        seq=1,
        event_id=event.id,
        invocation_id=event.invocation_id,
        author=event.author,
        node_path=event.node_info.path,
        branch=event.branch or "",
        timestamp=event.timestamp,
        data=whole,
    )
    assert session_export(row)["events"] == [whole]
    assert EventRow.objects.get(session=row).adk_json() == whole
    assert async_to_sync(OrmStore().list_events)(row.id) == [event]
