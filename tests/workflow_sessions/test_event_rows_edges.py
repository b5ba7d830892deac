"""Event rows without the fields their columns hold (``event_rows.py``) and on the
``interrupt.opened`` outbox row that refers to its ``Interrupt`` row: every reader of an event's
whole JSON gets what ``engine.Event.to_json()`` gave, and a relay of an opened interrupt later
(after a crash, after a rewind) makes the same inbox item as the relay at commit time."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.forms.models import model_to_dict

import engine
from engine import Event, FunctionCall, NodeInfo
from reviewconsole.agui.services import stored_events
from reviewconsole.console.timeline import timeline
from reviewconsole.workflow_sessions import outbox, store_sql
from reviewconsole.workflow_sessions.event_rows import TEXT_STATE
from reviewconsole.workflow_sessions.export import session_export
from reviewconsole.workflow_sessions.models import Checkpoint, WorkflowSession
from reviewconsole.workflow_sessions.models import Event as EventRow
from reviewconsole.workflow_sessions.restore import _state_at
from reviewconsole.workflow_sessions.serializers import session_json
from reviewconsole.workflow_sessions.store import OrmStore
from reviewconsole.workflow_sessions.store_rows import append_events

pytestmark = pytest.mark.django_db

ORDERED = connection.vendor == "sqlite"  # jsonb (PostgreSQL) keeps no key order inside ``data``


def _text(*texts: str) -> engine.Content:
    return engine.Content(role="model", parts=[engine.Part(text=t) for t in texts])


def _edge_events() -> list[Event]:
    call = FunctionCall(id="c-9", name="lookup", args={"z": 1, "a": 2})
    return [
        Event(  # the delta repeats the text, with every other action and a branch and nodeInfo keys
            invocation_id="inv-2",
            author="writer",
            branch="wf@1/writer@1",
            node_info=NodeInfo(path="wf@1/writer@1", output_for=["wf@1/writer@1", "wf@1"], message_as_output=True),
            content=_text("Ünïcode ✓\n", "second line"),
            actions=engine.EventActions(
                state_delta={"draft": "Ünïcode ✓\nsecond line", "app:copy": "Ünïcode ✓\nsecond line"},
                route=["a", "b"],
                requested_tool_confirmations={"c-1": {"hint": "x"}},
                skip_summarization=True,
                transfer_to_agent="other",
                rewind_before_invocation_id="inv-1",
            ),
            output="Ünïcode ✓\nsecond line",
            custom_metadata={"k": [1, 2]},
        ),
        Event(author="a", content=_text(""), state={"empty": ""}),  # empty text: stored as it is
        Event(author="a", content=_text("1"), state={"n": 1}),  # a number equal to the text? no
        Event(author="a", content=_text("true"), state={"b": True}),
        Event(author="a", content=_text("x"), state={"same": "x", "other": "y"}),
        Event(author="a", state={"only": "state"}),  # no content at all
        Event(  # text beside a function call
            author="model",
            content=engine.Content(role="model", parts=[engine.Part(text="see"), engine.Part(function_call=call)]),
            state={"out": "see"},
            partial=True,
            isolation_scope="s1",
        ),
        Event(author="a", branch="", content=_text("t"), state={"temp:t": "t", "user:u": "t"}, error_code="E"),
        Event(author="a", content=engine.Content(role="model", parts=[]), error_message="boom"),
    ]


def _dumps(events: list[dict]) -> list[str]:
    return [json.dumps(e, sort_keys=not ORDERED) for e in events]


def _stored(events: list[Event]) -> WorkflowSession:
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test")
    append_events(row, events)
    row.save()
    return row


def test_every_reader_gives_the_engines_json_for_edge_events():
    events = _edge_events()
    row = _stored(events)
    written = _dumps([e.to_json() for e in events])
    assert _dumps(session_export(row)["events"]) == written
    assert _dumps(session_json(row)["events"]) == written
    assert _dumps([e.adk_json() for e in EventRow.objects.filter(session=row).order_by("seq")]) == written
    assert _dumps([e.to_json() for e in async_to_sync(OrmStore().list_events)(row.id)]) == written
    streamed, _ = stored_events(row.id, 0, known=set())
    assert _dumps([e.to_json() for e in streamed]) == written
    stored = EventRow.objects.filter(session=row).order_by("seq")
    assert [TEXT_STATE in e.data for e in stored] == [True, False, False, False, False, False, True, True, False]


def test_the_plain_sql_insert_reads_back_the_same_for_edge_events():
    events = _edge_events()
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test", last_seq=len(events))
    store_sql.insert_events(row.id, events, len(events))
    assert _dumps(session_export(row)["events"]) == _dumps([e.to_json() for e in events])


def test_the_timeline_and_a_replayed_state_see_the_delta_of_a_text_event():
    events = _edge_events()
    row = _stored(events)
    rows = timeline(row)
    deltas = [r.state_delta for r in rows if hasattr(r, "state_delta")]
    assert deltas[0] == {"draft": "Ünïcode ✓\nsecond line", "app:copy": "Ünïcode ✓\nsecond line"}
    checkpoint = Checkpoint.objects.create(session=row, data={}, event_seq=len(events), state=None)
    assert _state_at(row, checkpoint) == {
        "draft": "Ünïcode ✓\nsecond line",
        "empty": "",
        "n": 1,
        "b": True,
        "same": "x",
        "other": "y",
        "only": "state",
        "out": "see",
    }


def test_old_whole_rows_and_new_rows_mix_in_one_session():
    events = _edge_events()[:3]
    row = WorkflowSession.objects.create(workflow="email-review", user_id="test", last_seq=1)
    old = events[0]
    EventRow.objects.create(
        session=row,
        seq=1,
        event_id=old.id,
        invocation_id=old.invocation_id,
        author=old.author,
        node_path=old.node_info.path,
        branch=old.branch or "",
        timestamp=old.timestamp,
        data=old.to_json(),
    )
    append_events(row, events[1:])
    row.save()
    assert [e.to_json() for e in async_to_sync(OrmStore().list_events)(row.id)] == [e.to_json() for e in events]
    assert session_json(row)["events"] == [e.to_json() for e in events]


# -- the opened interrupt's outbox row, relayed later ---------------------------------------------

_ASKED = ("workflow", "title", "kind", "function_name", "node_path", "branch", "message")
_ASKED += ("payload", "response_schema", "tool_call", "metadata", "queue", "status", "on_expiry")


def _asked(item) -> dict:
    fields = model_to_dict(item, fields=_ASKED)
    due = item.due_at - item.session_interrupt.created_at if item.due_at else None  # due from when it was asked
    return {**fields, "due_after": due, "search_text": item.search_text.replace(item.interrupt_id, "")}


def test_an_opened_interrupt_relayed_after_a_crash_makes_the_same_item(start_review, monkeypatch):
    from reviewconsole.inbox.models import Item

    _, relayed_at_once = start_review()
    monkeypatch.setattr(outbox, "_relay_commit", lambda session_id, batch: None)  # died after the commit
    with pytest.raises(Item.DoesNotExist):
        start_review()
    monkeypatch.undo()
    assert outbox.relay() >= 1  # the recovery sweep
    later = Item.objects.exclude(pk=relayed_at_once.pk).get(status="pending")
    assert _asked(later) == _asked(relayed_at_once)
