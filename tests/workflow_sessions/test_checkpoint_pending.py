"""A pause's checkpoint row keeps the wire ids of the interrupts pending then, oldest first (what a
rewind to it reopens: ``restore.py``); the ``INSERT`` reads them itself (``store_writes``)."""

from __future__ import annotations

import pytest

from engine import Commit, InterruptRecord, SessionStatus
from reviewconsole.workflow_sessions.engine_calls import call
from reviewconsole.workflow_sessions.models import Checkpoint
from reviewconsole.workflow_sessions.store import OrmStore

pytestmark = pytest.mark.django_db


def _pause(store: OrmStore, session, *, opened=(), cancelled=(), root=None):
    record = call(
        store.commit(
            session.id,
            Commit(
                events=[],
                checkpoint={"format": 1, "root": root},
                status=SessionStatus.WAITING,
                expected_version=session.version,
                invocation_id="inv",
                pause=True,
                opened=[
                    InterruptRecord(id=w, session_id=session.id, kind="input", path="wf@1/ask@1", local_id=w)
                    for w in opened
                ],
                cancelled=list(cancelled),
            ),
        )
    )
    return record, Checkpoint.objects.get(pk=record.checkpoint_id).pending


def test_a_pause_keeps_the_pending_interrupts_oldest_first():
    store = OrmStore()
    session = call(store.create_session(app_name="app", user_id="ada"))
    session, pending = _pause(store, session, opened=["zz-first", "aa-second"])
    assert pending == ["zz-first", "aa-second"]  # in the order opened, not by name
    session, pending = _pause(store, session, opened=["mm-third"], cancelled=["zz-first"])
    assert pending == ["aa-second", "mm-third"]
    _, pending = _pause(store, session, cancelled=["aa-second", "mm-third"], root={"awaiting_message": True})
    assert pending == []  # none pending: an empty list, not null
